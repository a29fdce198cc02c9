"""The carrier's know-how: identify the customer, then troubleshoot with them step by step.

The customer is identified by the phone number they give, or by the caller ID the task
states. What they need is read from the task and from what they say: service back,
mobile data, picture messages, more data or another plan. The agent looks at the line,
the bills and the data usage with its tools; everything on the phone is asked of the
customer (a device step: the stand-in asks them to run it and reads what the phone
shows). What the phone shows is kept as one picture (:func:`phone_state`): the status bar
the customer describes, every check, and what each step reports ("Mobile data is now
on."), so nothing known is checked twice and each check costs the customer one request.

The policy's troubleshooting guide sets the order: service first (a suspended line and
its overdue bill, airplane mode, the SIM, the APN), then mobile data (data switch, the
network mode, then what a speed test shows: no data at all means a used-up allowance or,
with data left, roaming that is off on the line or the phone; slow data means data saver,
a poor VPN or the network mode), then picture messages (Wi-Fi calling, the MMS server,
the messaging app's permissions, then a test message; only when it still fails is mobile
data looked at closer). A fix is followed by a fresh test of the symptom, and the
troubleshooting stops once the test passes. Refuels and plan changes are put to the
customer first.
"""

from __future__ import annotations

import re
from typing import Any

from hasbench.participants.playbooks.common import declined, failed, output
from hasbench.participants.standin import (
    Call,
    Case,
    Done,
    GiveUp,
    Need,
    NotUnderstood,
    Step,
    Tell,
)

PHONE = re.compile(r"\b(555-\d{3}-\d{4})\b")
CHECKS = (
    "check_status_bar", "check_network_status", "check_sim_status", "check_apn_settings",
    "check_data_restriction_status", "check_vpn_status", "check_network_mode_preference",
    "check_wifi_status", "check_wifi_calling_status", "check_app_permissions",
    "check_app_status", "check_installed_apps", "check_payment_request", "run_speed_test",
    "can_send_mms",
)  # fmt: skip
"""The phone's read-only checks."""
STATUS_BAR = re.compile(
    r"((?:Airplane mode|No service|Signal: \w+) \| [^\n]*?Battery \d+%)"  # this workbench's
    r"|Status Bar: ([^\n]*?🔋 \d+%)"  # τ²-bench's: "📶⁴ Excellent | 5G | 📱 Data Enabled | 🔋 80%"
)
"""A status bar, in this workbench's words (group 1) or τ²-bench's (group 2)."""
_SWITCH = r"(?::| is now| enabled:| mode is| mode is now) (on|off|yes|no)\b"
SETTINGS = (
    ("airplane", re.compile(r"Airplane mode" + _SWITCH, re.IGNORECASE)),
    ("sim", re.compile(r"SIM card(?: status)?: (.+)", re.IGNORECASE)),
    ("data", re.compile(r"Mobile data" + _SWITCH, re.IGNORECASE)),
    ("roaming", re.compile(r"Data roaming" + _SWITCH, re.IGNORECASE)),
    ("saver", re.compile(r"Data saver" + _SWITCH, re.IGNORECASE)),
    ("mode", re.compile(r"(?:Preferred network mode(?::| set to:?)|Network mode preference:) "
                        r"(\w+)", re.IGNORECASE)),
    ("wifi_calling", re.compile(r"Wi-Fi calling" + _SWITCH, re.IGNORECASE)),
    ("tech", re.compile(r"Network type: (\w+)", re.IGNORECASE)),
    ("vpn", re.compile(r"server.performance(?: |': <PerformanceLevel\.\w+: ')(\w+)")),
)  # fmt: skip
"""Settings a check or a step on the phone reports, and how its output says them (in this
workbench's words or τ²-bench's: "Mobile data: on", "Mobile Data Enabled: Yes")."""
SWITCHED = {"yes": "on", "no": "off"}
SIM_SAID = {
    "no sim card detected": "no SIM card detected",
    "locked with a pin": "locked (PIN required)",
    "locked with a puk": "locked (PUK required)",
    "sim card is active": "active",
}
"""What a SIM check's sentence says, as the settings' SIM values."""
WHO = ("customer",)
GOOD_MODE = "4g_5g_preferred"
MMS_PERMISSIONS = ("sms", "storage")


def requests_in(text: str) -> list[str]:
    """What a text asks for (a status bar it quotes asks for nothing)."""
    lower = STATUS_BAR.sub("", text).lower()
    found = []
    if "no service" in lower or "call and text" in lower:
        found.append("service")
    if "mobile data" in lower or "mobile internet" in lower or "speed test" in lower:
        found.append("data")
    if "picture message" in lower or "mms" in lower:
        found.append("mms")
    if re.search(r"\d+(\.\d+)? gb of extra data", lower):
        found.append("refuel")
    if re.search(r"to the .+ plan", lower):
        found.append("plan")
    return found


class TelecomPlaybook:
    """Support requests of a mobile customer (see the module docstring)."""

    def __init__(self) -> None:
        self.said: list[str] = []
        self.told = 0
        """How many completed fixes the customer has been told about."""
        self.deeper = False
        """Whether the symptom outlasted the usual fixes, so mobile data is looked at closer."""
        self.no_data = False
        """Whether a speed test found no data although the phone had service and data on."""
        self.diagnosed: list[str] = []
        """Needs found by troubleshooting rather than asked for (a used-up allowance)."""

    def read(self, case: Case, text: str, source: str) -> None:
        """The phone number, the request, amounts and plan names stated in texts."""
        if source.startswith("tool:") or source == "profile":
            return
        if source != "task":
            self.said.append(text)
        known = case.facts.get("requests") or []
        case.learn("requests", known + [r for r in requests_in(text) if r not in known], source)
        if not case.facts.get("phone_number"):  # the caller's own words or caller ID
            if number := PHONE.search(text):
                case.learn("phone_number", number.group(1), source)
        amount = r"(\d+(?:\.\d+)?) gb of extra data|(?:ask for|want|need) (\d+(?:\.\d+)?) gb\b"
        if gb := re.search(amount, text.lower()):
            case.learn("extra_data_gb", float(gb.group(1) or gb.group(2)), source)
        if plan := re.search(r"to the (.+?) plan", text):
            case.learn("wanted_plan", plan.group(1), source)

    # -- deciding --------------------------------------------------------------------------

    def next_step(self, case: Case) -> Step:
        """The next step of the troubleshooting (see the module docstring)."""
        phone = case.facts.get("phone_number")
        if not phone:
            if case.has("phone_number"):
                return GiveUp("I could not identify you without your phone number.")
            return Need(
                "phone_number",
                "What is the phone number of your line, and what is the problem?",
                who=WHO,
                topics=("request",),
            )
        if not self.said and not case.has("request"):  # known by caller ID: hear them out
            return Need("request", "How can I help, and what matters to you in the fix?", who=WHO)
        customer = output(case, "get_customer_by_phone", phone_number=phone)
        if customer is None:
            if failed(case, "get_customer_by_phone"):
                return GiveUp(f"I found no customer with the number {phone}.")
            return Call("get_customer_by_phone", {"phone_number": phone})
        line = self._line(case, customer, phone)
        if not isinstance(line, dict):
            return line
        requests = (case.facts.get("requests") or []) + self.diagnosed
        fixes = [name for name, _ in case.done if name not in CHECKS]
        if len(fixes) > self.told:  # keep the customer posted after each fix
            self.told = len(fixes)
            return Tell(f"Done so far: {', '.join(f.replace('_', ' ') for f in fixes)}.", WHO)
        for part in (self._account, self._troubleshoot):
            step = part(case, customer, line, requests)
            if step is not None:
                return step
        if not requests:
            return NotUnderstood("I could not tell what is wrong or what you want changed.")
        fixed = any(name not in CHECKS for name, _ in case.done)
        if not fixed and not case.declined and not _transferred(case):
            return GiveUp("I could not change anything for you.")
        return Done(self._summary(case, requests))

    def _line(self, case: Case, customer: dict[str, Any], phone: str) -> dict[str, Any] | Step:
        """The line with the customer's number (the latest details the tools showed)."""
        for line_id in customer["line_ids"]:
            details = output(case, "get_details_by_id", id=line_id)
            if details is None:
                return Call("get_details_by_id", {"id": line_id})
            if details.get("phone_number") == phone:
                return details
        return GiveUp("None of your lines has that number.")

    # -- the account: refuels and plan changes --------------------------------------------

    def _account(self, case: Case, customer: dict, line: dict, requests: list[str]) -> Step | None:
        ids = {"customer_id": customer["customer_id"], "line_id": line["line_id"]}
        if "refuel" in requests and not case.ran("refuel_data"):
            if declined(case, "refuel_data"):
                return None
            gb = case.facts.get("extra_data_gb")
            if gb is None:
                if case.has("extra_data_gb"):
                    return None
                return Need("extra_data_gb", "How many GB of extra data do you want?", who=WHO)
            plans = output(case, "get_available_plans")
            if plans is None:
                return Call("get_available_plans", {})
            gb = min(float(gb), 2.0)
            own = next((p for p in plans if p["plan_id"] == line["plan_id"]), None)
            if own is not None and not case.has("price_told"):
                price = gb * own["data_refueling_price_per_gb"]
                note = f"{gb} GB of extra data costs ${price:.2f} on your next bill."
                case.learn("price_told", note, "tool")
                return Tell(note, WHO)
            return Call("refuel_data", {**ids, "gb_amount": gb}, confirm=True)
        if "plan" in requests and not case.ran("change_plan"):
            plans = output(case, "get_available_plans")
            if plans is None:
                return Call("get_available_plans", {})
            wanted = str(case.facts.get("wanted_plan") or "").lower()
            plan = next((p for p in plans if p["name"].lower() == wanted), None)
            if plan is None or declined(case, "change_plan"):
                return None
            if not case.has("price_told"):
                note = f"The {plan['name']} plan costs ${plan['price_per_month']:.2f} a month."
                case.learn("price_told", note, "tool")
                return Tell(note, WHO)
            return Call("change_plan", {**ids, "plan_id": plan["plan_id"]}, confirm=True)
        if not {"refuel", "plan"} & set(requests) and not (
            {"service", "data", "mms"} & set(requests)
        ):
            if not case.has("request"):
                return Need("request", "What can I help you with?", who=WHO)
        return None

    # -- troubleshooting ----------------------------------------------------------------------

    def _troubleshoot(
        self, case: Case, customer: dict, line: dict, requests: list[str]
    ) -> Step | None:
        """Service first, then mobile data, then picture messages (the policy's order)."""
        if not {"service", "data", "mms"} & set(requests):
            return None
        ids = {"customer_id": customer["customer_id"], "line_id": line["line_id"]}
        if line["status"] == "Suspended" and not case.ran("resume_line"):
            return self._suspended(case, customer, line, ids)
        if case.ran("resume_line") and not _after(case, "reboot_device", "resume_line"):
            return self._device(case, "reboot_device")
        phone = phone_state(case, self.said)
        for part in (self._service, self._data, self._mms):
            step = part(case, phone, line, ids, requests)
            if step is not None:
                return step
        return None

    def _suspended(self, case: Case, customer: dict, line: dict, ids: dict) -> Step | None:
        """A suspended line: its overdue bill paid on the phone, seen paid, then resumed.

        The customer is told the amount first; the payment request reaches their phone.
        """
        if line.get("contract_end_date", "9999") < "2025-02-25":
            return self._transfer(case, "the line's contract has ended")
        owner = {"customer_id": customer["customer_id"]}
        bills = output(case, "get_bills_for_customer", **owner)
        if bills is None or _latest(case, "get_bills_for_customer") < _latest(case, "make_payment"):
            return Call("get_bills_for_customer", owner)  # a payment is confirmed on the bill
        overdue = [b for b in bills if b["status"] == "Overdue"]
        if not overdue:
            return Call("resume_line", ids)
        bill = overdue[0]
        requested = ("send_payment_request", {**owner, "bill_id": bill["bill_id"]})
        if requested not in case.done:
            if not case.has("overdue_told"):
                note = (
                    f"Your line is suspended because bill {bill['bill_id']} of "
                    f"${bill['total_due']:.2f} is overdue. I will send you a payment request "
                    "that you can pay on your phone; then I can resume the line."
                )
                case.learn("overdue_told", note, "tool")
                return Tell(note, WHO)
            return Call(*requested, confirm=True)
        if _after(case, "make_payment", "send_payment_request"):
            return Done(f"Bill {bill['bill_id']} is still overdue, so the line stays suspended.")
        return self._device(case, "make_payment")

    def _service(
        self, case: Case, phone: dict, line: dict, ids: dict, requests: list
    ) -> Step | None:
        """No service: airplane mode, the SIM card, the APN (the line was handled before)."""
        if phone.get("airplane") == "on":
            return self._device(case, "toggle_airplane_mode")
        if phone.get("service") is None or phone.get("airplane") is None:
            return self._look(case, "check_network_status")
        if phone["service"]:
            return None
        sim = phone.get("sim")
        if sim is None:
            return self._look(case, "check_network_status")
        if "no SIM" in sim:
            return self._device(case, "reseat_sim_card")
        if "locked" in sim:
            return self._transfer(case, "the SIM card is locked")
        step = self._apn(case, phone, "apn_ok")
        if step is not None:
            return step
        return self._transfer(case, "the phone has no service after every fix")

    def _data(self, case: Case, phone: dict, line: dict, ids: dict, requests: list) -> Step | None:
        """Mobile data: the data switch and the network mode, then what the speed test shows.

        For picture messages only the basics are looked at here; the speed test comes in
        when a picture message still fails with every messaging setting right.
        """
        if not {"data", "mms"} & set(requests):
            return None
        if phone.get("data") is None:
            return self._look(case, "check_network_status")
        if phone["data"] == "off":
            return self._device(case, "toggle_data")
        said = " ".join(self.said).lower()
        wanted = "4g_only" if "4g only" in said or "4g-only" in said else None
        slow = ("2G", "3G") if "data" in requests else ("2G",)  # MMS works from 3G up
        if wanted or phone.get("tech") in slow:
            step = self._mode(case, phone, wanted or GOOD_MODE)
            if step is not None:
                return step
        if "data" not in requests and not self.deeper:
            return None
        if self.no_data:  # no data with service and the switch on: allowance, roaming
            step = self._no_data(case, phone, line, ids)
            if step is not None:
                return step
        speed = phone.get("speed")
        if speed is None:
            return self._look(case, "run_speed_test")
        if speed == "none":
            if not self.no_data:
                self.no_data = True
                return self.next_step(case)
            return self._transfer(case, "mobile data does not work after every fix")
        if speed == "Excellent" or "data" not in requests:
            return None
        if phone.get("saver") is None:
            return self._look(case, "check_data_restriction_status")
        if phone["saver"] == "on":
            return self._device(case, "toggle_data_saver_mode")
        if phone.get("vpn") in (None, "connected"):  # its server's performance is unknown
            return self._look(case, "check_vpn_status")
        if phone["vpn"] == "poor":
            return self._device(case, "disconnect_vpn")
        return self._mode(case, phone, wanted or GOOD_MODE)

    def _mode(self, case: Case, phone: dict, wanted: str) -> Step | None:
        mode = phone.get("mode")
        if mode is None:
            return self._look(case, "check_network_mode_preference")
        if mode != wanted:
            return self._device(case, "set_network_mode_preference", {"mode": wanted})
        return None

    def _no_data(self, case: Case, phone: dict, line: dict, ids: dict) -> Step | None:
        """No data although the phone has service and data is on: the allowance or roaming.

        The allowance is on the line; with data left, the phone is most likely abroad
        without roaming, which must be allowed on the line and switched on in the phone.
        """
        usage = output(case, "get_data_usage", **ids)
        if usage is None:
            return Call("get_data_usage", ids)
        used, limit, refueled = (  # numbers, or numbers as text in τ²-bench's output
            float(usage[k]) for k in ("data_used_gb", "data_limit_gb", "data_refueling_gb")
        )
        if used >= limit + refueled and not case.ran("refuel_data"):
            if "refuel" not in self.diagnosed:  # offered like a refuel asked for
                self.diagnosed.append("refuel")
                self.no_data = False  # tested again after the refuel
                return self.next_step(case)
            return Done("Your data allowance for this cycle is used up; no data was added.")
        if not line["roaming_enabled"] and not case.ran("enable_roaming"):
            return Call("enable_roaming", ids)
        if phone.get("roaming") is None:
            return self._look(case, "check_network_status")
        if phone["roaming"] == "off":
            return self._device(case, "toggle_roaming")
        return None

    def _mms(self, case: Case, phone: dict, line: dict, ids: dict, requests: list) -> Step | None:
        """Picture messages: Wi-Fi calling, the MMS server, the messaging app's permissions."""
        if "mms" not in requests or phone.get("mms") is True:
            return None
        if phone.get("wifi_calling") is None:
            return self._look(case, "check_wifi_calling_status")
        if phone["wifi_calling"] == "on":
            return self._device(case, "toggle_wifi_calling")
        step = self._apn(case, phone, "mmsc_set")
        if step is not None:
            return step
        granted = phone.get("permissions", {}).get("messaging")
        if granted is None:
            return self._look(case, "check_app_permissions", {"app_name": "messaging"})
        for permission in MMS_PERMISSIONS:
            if permission not in granted:
                arguments = {"app_name": "messaging", "permission": permission}
                return self._device(case, "grant_app_permission", arguments)
        if phone.get("mms") is None:
            return self._look(case, "can_send_mms")
        if not self.deeper:  # every messaging setting is right: is mobile data really working?
            self.deeper = True
            return self._look(case, "run_speed_test")
        return self._transfer(case, "picture messages fail after every fix")

    # -- device steps ------------------------------------------------------------------------

    def _apn(self, case: Case, phone: dict, setting: str) -> Step | None:
        """The APN settings, ``setting`` among them: looked at, reset, then put into effect.

        A reset takes effect when the phone restarts. None when ``setting`` is right.
        """
        if phone.get("apn_reset_pending"):
            return self._device(case, "reboot_device")
        if phone.get(setting) is None:
            return self._look(case, "check_apn_settings")
        if not phone[setting]:
            return self._device(case, "reset_apn_settings")
        return None

    def _look(self, case: Case, name: str, arguments: dict | None = None) -> Step:
        """Ask the customer to check something on the phone."""
        if name in case.unable:
            return GiveUp("I cannot check your phone without you.")
        return Call(name, arguments or {})

    def _device(self, case: Case, name: str, arguments: dict | None = None) -> Step:
        """A step the customer takes on their phone (asked of them; they hold the tool)."""
        return Call(name, arguments or {})

    def _transfer(self, case: Case, why: str) -> Step | None:
        if _transferred(case):
            return None
        return Call("transfer_to_human_agents", {"summary": f"Cannot fix remotely: {why}."})

    def _summary(self, case: Case, requests: list[str]) -> str:
        """What was done, and what the last test on the phone showed."""
        if _transferred(case):
            return "I could not fix this remotely; I have transferred you to a human agent."
        done = [name.replace("_", " ") for name, _ in case.done if name not in CHECKS]
        if not done:
            return "You declined the change, so nothing was changed."
        price = case.facts.get("price_told")  # the cost is part of the answer, asked or not
        told = f" {price}" if price else ""
        phone = phone_state(case, self.said)
        if phone.get("mms") is True:
            shown = "A test picture message went through."
        elif phone.get("speed") not in (None, "none"):
            shown = f"The speed test now reads {phone['speed']}."
        elif phone.get("service") and "service" in requests:
            shown = "Your phone has service again."
        else:
            shown = "Your phone should work now."
        return f"Done: {'; '.join(done)}.{told} {shown}"


def phone_state(case: Case, statements: list[str]) -> dict[str, Any]:
    """What is known of the customer's phone: the latest the customer or a check showed.

    The status bar the customer describes comes first, then every output of a step on
    the phone in order. A speed test or a picture message tells only until the next
    change on the phone or the line.
    """
    phone: dict[str, Any] = {"permissions": {}}
    for text in statements:
        _read_status_bars(phone, text)
    for outcome in case.outputs:
        if outcome.error is not None:
            continue
        if outcome.name not in CHECKS and not outcome.name.startswith("get_"):
            phone.pop("speed", None)  # something changed: the symptom needs a fresh test
            phone.pop("mms", None)
        _read_output(phone, str(outcome.output))
    return phone


def _read_output(phone: dict[str, Any], text: str) -> None:
    """What a check or a step on the phone says, in either wording (see :data:`SETTINGS`)."""
    lower = text.lower()
    for key, pattern in SETTINGS:
        if found := pattern.search(text):
            value = found.group(1)
            phone[key] = SWITCHED.get(value.lower(), value.lower() if key != "sim" else value)
    if found := re.search(r"Connection: (\w+)", text):
        phone["service"] = found.group(1) == "connected"
    for said, sim in SIM_SAID.items():
        if said in lower:
            phone["sim"] = sim
    if "SIM card reinserted" in text or "SIM card re-seated" in text:
        phone["sim"] = "active"
    apn = re.search(
        r"APN(?: Name)?: (\S+?);? ?\n?MMSC URL(?: \(for picture messages\))?: (.+)", text
    )
    if apn:
        phone["apn_ok"] = apn.group(1) != "broken"
        phone["mmsc_set"] = apn.group(2).strip() != "Not Set"
    if "reset to defaults when the phone restarts" in text or "will reset at reboot" in text:
        phone["apn_reset_pending"] = True
    restarted = "The phone restarted" in text or "Restarting network services" in text
    if restarted and phone.pop("apn_reset_pending", False):
        phone["apn_ok"] = phone["mmsc_set"] = True
    off = r"VPN is (?:off|turned off)|VPN is (?:enabled|turned on in settings), but|VPN disco"
    if re.search(off + r"|no VPN connection", text, re.IGNORECASE):
        phone["vpn"] = "off"
    if found := re.search(r"^(\w+) permissions: (.+)$", text, re.MULTILINE):
        granted = [] if found.group(2) == "none" else found.group(2).split(", ")
        phone["permissions"][found.group(1)] = set(granted)
    if found := re.search(r"App '(\w+)' has permission for: (.+?)\.$", text, re.MULTILINE):
        phone["permissions"][found.group(1)] = set(found.group(2).split(", "))
    if found := re.search(r"App '(\w+)' currently has no permissions", text):
        phone["permissions"][found.group(1)] = set()
    if found := re.search(r"Granted (\w+) to (\w+)", text):
        phone["permissions"].setdefault(found.group(2), set()).add(found.group(1))
    if "speed test failed" in lower:
        phone["speed"] = "none"
    elif found := re.search(r"(?:Download speed|Speed Test Result).*?\((Very Poor|Poor|Fair|Good|"
                            r"Excellent)\)", text):  # fmt: skip
        phone["speed"] = found.group(1)
    if "picture message" in lower or "mms messages" in lower:
        phone["mms"] = "can be sent" in lower or "can send mms" in lower
    _read_status_bars(phone, text)


def _read_status_bars(phone: dict[str, Any], text: str) -> None:
    """The status bars a text shows, in order, in either wording."""
    for bar in STATUS_BAR.finditer(text):
        if bar.group(1):
            _read_status_bar(phone, bar.group(1))
        else:
            _read_icon_bar(phone, bar.group(2))


def _read_icon_bar(phone: dict[str, Any], bar: str) -> None:
    """A status bar with icons (τ²-bench's wording).

    "✈️ Airplane Mode | 🔋 80%", "📵 No Signal | …", or
    "📶³ Good | 4G | 📱 Data Enabled | 🔽 Data Saver | 🔒 VPN Connected | 🔋 80%".
    """
    parts = [part.split(" ", 1)[-1] for part in bar.split(" | ")]
    if _read_service(phone, parts, "Airplane Mode", "No Signal"):
        phone["data"] = "on" if "Data Enabled" in parts else "off"
        phone["saver"] = "on" if "Data Saver" in parts else "off"
    _read_vpn(phone, "VPN Connected" in parts)


def _read_status_bar(phone: dict[str, Any], bar: str) -> None:
    """A status bar: "Signal: good | 4G | Mobile data on (data saver) | VPN | Battery 80%"."""
    parts = bar.split(" | ")
    if _read_service(phone, parts, "Airplane mode", "No service"):
        phone["data"] = "on" if "Mobile data on" in bar else "off"
    if "Mobile data on" in bar:
        phone["data"] = "on"
    phone["saver"] = "on" if "(data saver)" in bar else "off"
    _read_vpn(phone, "VPN" in parts)


def _read_service(phone: dict[str, Any], parts: list[str], airplane: str, no_service: str) -> bool:
    """Airplane mode, service and network type from a status bar's parts; whether in service.

    ``airplane`` and ``no_service`` are the bar's first part in those states (in its wording);
    in service its second part is the network type.
    """
    in_service = parts[0] not in (airplane, no_service)
    phone.update(
        airplane="on" if parts[0] == airplane else "off",
        service=in_service,
        tech=parts[1] if in_service else "none",
    )
    return in_service


def _read_vpn(phone: dict[str, Any], shown: bool) -> None:
    """A VPN shown on the bar is connected (unless a check said more); none shown is off."""
    if not shown:
        phone["vpn"] = "off"
    elif phone.get("vpn") in (None, "off"):
        phone["vpn"] = "connected"


def _transferred(case: Case) -> bool:
    """Whether the case was handed to a human agent (a write here, a plain call in τ²)."""
    return _latest(case, "transfer_to_human_agents") >= 0


def _latest(case: Case, name: str) -> int:
    """The position of the latest successful output of a tool (-1 when it never ran)."""
    found = [i for i, o in enumerate(case.outputs) if o.name == name and o.error is None]
    return found[-1] if found else -1


def _after(case: Case, later: str, earlier: str) -> bool:
    """Whether ``later`` ran after the last run of ``earlier``."""
    names = [name for name, _ in case.done]
    if earlier not in names or later not in names:
        return False
    last = len(names) - 1 - names[::-1].index(earlier)
    return later in names[last + 1 :]

"""The carrier's know-how: identify the customer, then troubleshoot with them step by step.

The customer is identified by the phone number they give, or by the caller ID the task
states. What they need is read from the task and from what they say: service back,
mobile data, picture messages, more data or another plan. The agent looks at the line
and the bills with its tools; everything on the phone is asked of the customer (a device
step: the stand-in asks them to run it and reads what the phone shows). The policy's
troubleshooting guide sets the order: service first (airplane mode, SIM, a suspended line
and its overdue bill, the APN), then mobile data (data switch, roaming abroad, data saver,
VPN, network mode) and picture messages (Wi-Fi calling, the MMS server, the messaging
app's permissions); each fix is checked again on the phone. Refuels and plan changes are
put to the customer first.
"""

from __future__ import annotations

import re
from typing import Any

from hasbench.participants.playbooks.common import declined, failed, output
from hasbench.participants.standin import Call, Case, Done, Need, Step, Tell

PHONE = re.compile(r"\b(555-\d{3}-\d{4})\b")
CHECKS = (
    "check_network_status", "check_apn_settings", "check_data_restriction_status",
    "check_vpn_status", "check_network_mode_preference", "check_wifi_calling_status",
    "check_app_permissions", "run_speed_test", "can_send_mms",
)  # fmt: skip
"""The phone's read-only checks."""
WHO = ("customer",)
GOOD_MODE = "4g_5g_preferred"
MMS_PERMISSIONS = ("sms", "storage")


def requests_in(text: str) -> list[str]:
    """What a text asks for."""
    lower = text.lower()
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
        """How many completed steps the customer has been told about."""

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
        if gb := re.search(r"(\d+(?:\.\d+)?) gb of extra data", text.lower()):
            case.learn("extra_data_gb", float(gb.group(1)), source)
        if plan := re.search(r"to the (.+?) plan", text):
            case.learn("wanted_plan", plan.group(1), source)

    # -- deciding --------------------------------------------------------------------------

    def next_step(self, case: Case) -> Step:
        """The next step of the troubleshooting (see the module docstring)."""
        phone = case.facts.get("phone_number")
        if not phone:
            if case.has("phone_number"):
                return Done("I could not identify you without your phone number.")
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
                return Done(f"I found no customer with the number {phone}.")
            return Call("get_customer_by_phone", {"phone_number": phone})
        line = self._line(case, customer, phone)
        if not isinstance(line, dict):
            return line
        requests = case.facts.get("requests") or []
        fixes = [name for name, _ in case.done if name not in CHECKS]
        if len(fixes) > self.told:  # say what was done before the next step
            self.told = len(fixes)
            return Tell(f"Done so far: {', '.join(f.replace('_', ' ') for f in fixes)}.", WHO)
        for part in (self._account, self._service, self._data, self._mms):
            step = part(case, customer, line, requests)
            if step is not None:
                return step
        return Done(self._summary(case, requests))

    def _line(self, case: Case, customer: dict[str, Any], phone: str) -> dict[str, Any] | Step:
        """The line with the customer's number (the latest details the tools showed)."""
        for line_id in customer["line_ids"]:
            details = output(case, "get_details_by_id", id=line_id)
            if details is None:
                return Call("get_details_by_id", {"id": line_id})
            if details.get("phone_number") == phone:
                return details
        return Done("None of your lines has that number.")

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

    # -- service ------------------------------------------------------------------------------

    def _service(self, case: Case, customer: dict, line: dict, requests: list[str]) -> Step | None:
        if not {"service", "data", "mms"} & set(requests):
            return None
        ids = {"customer_id": customer["customer_id"], "line_id": line["line_id"]}
        if line["status"] == "Suspended" and not case.ran("resume_line"):
            if line.get("contract_end_date", "9999") < "2025-02-25":
                return self._transfer(case, "the line's contract has ended")
            bills = output(case, "get_bills_for_customer", customer_id=customer["customer_id"])
            if bills is None:
                return Call("get_bills_for_customer", {"customer_id": customer["customer_id"]})
            overdue = [b for b in bills if b["status"] == "Overdue"]
            if overdue and not case.ran("send_payment_request"):
                bill = {"customer_id": customer["customer_id"], "bill_id": overdue[0]["bill_id"]}
                return Call("send_payment_request", bill, confirm=True)
            if overdue and not case.ran("make_payment"):
                return self._device(case, "make_payment")
            return Call("resume_line", ids)
        if case.ran("resume_line") and not _after(case, "reboot_device", "resume_line"):
            return self._device(case, "reboot_device")
        status = self._check(case, "check_network_status")
        if not isinstance(status, str):
            return status
        if "Airplane mode: on" in status:
            return self._device(case, "toggle_airplane_mode")
        if "no SIM card" in status:
            return self._device(case, "reseat_sim_card")
        if "locked" in status:
            return self._transfer(case, "the SIM card is locked")
        if "Connection: no_service" in status:
            apn = self._check(case, "check_apn_settings")
            if not isinstance(apn, str):
                return apn
            if "APN: broken" in apn or not case.ran("reset_apn_settings"):
                return self._reset_apn(case)
            return self._transfer(case, "the phone has no service after every fix")
        return None

    # -- mobile data ---------------------------------------------------------------------------

    def _data(self, case: Case, customer: dict, line: dict, requests: list[str]) -> Step | None:
        if not {"data", "mms"} & set(requests):
            return None
        status = self._check(case, "check_network_status")
        if not isinstance(status, str):
            return status
        if "Mobile data: off" in status:
            return self._device(case, "toggle_data")
        if "abroad" in " ".join(self.said).lower():
            if not line["roaming_enabled"] and not case.ran("enable_roaming"):
                ids = {"customer_id": customer["customer_id"], "line_id": line["line_id"]}
                return Call("enable_roaming", ids)
            if "Data roaming: off" in status:
                return self._device(case, "toggle_roaming")
        mode = self._check(case, "check_network_mode_preference")
        if not isinstance(mode, str):
            return mode
        wanted = "4g_only" if "4g only" in " ".join(self.said).lower() else GOOD_MODE
        if wanted not in mode:
            return self._device(case, "set_network_mode_preference", {"mode": wanted})
        if "data" not in requests:
            return None
        speed = self._check(case, "run_speed_test")
        if not isinstance(speed, str) or "(Excellent)" in speed:
            return speed if not isinstance(speed, str) else None
        saver = self._check(case, "check_data_restriction_status")
        if not isinstance(saver, str):
            return saver
        if "Data saver: on" in saver:
            return self._device(case, "toggle_data_saver_mode")
        vpn = self._check(case, "check_vpn_status")
        if not isinstance(vpn, str):
            return vpn
        if vpn.startswith("VPN connected"):
            return self._device(case, "disconnect_vpn")
        return None

    # -- picture messages ----------------------------------------------------------------------

    def _mms(self, case: Case, customer: dict, line: dict, requests: list[str]) -> Step | None:
        if "mms" not in requests:
            return None
        sent = self._check(case, "can_send_mms")
        if not isinstance(sent, str) or "can be sent" in sent:
            return sent if not isinstance(sent, str) else None
        calling = self._check(case, "check_wifi_calling_status")
        if not isinstance(calling, str):
            return calling
        if "Wi-Fi calling: on" in calling:
            return self._device(case, "toggle_wifi_calling")
        apn = self._check(case, "check_apn_settings")
        if not isinstance(apn, str):
            return apn
        if "MMSC URL: Not Set" in apn and not case.ran("reset_apn_settings"):
            return self._reset_apn(case)
        if case.ran("reset_apn_settings") and not _after(
            case, "reboot_device", "reset_apn_settings"
        ):
            return self._device(case, "reboot_device")
        permissions = self._check(case, "check_app_permissions", {"app_name": "messaging"})
        if not isinstance(permissions, str):
            return permissions
        for permission in MMS_PERMISSIONS:
            if permission not in permissions.split(":", 1)[-1]:
                arguments = {"app_name": "messaging", "permission": permission}
                return self._device(case, "grant_app_permission", arguments)
        return None

    # -- device steps ------------------------------------------------------------------------

    def _check(self, case: Case, name: str, arguments: dict | None = None) -> str | Step:
        """What a check shows since the last change on the phone or line; else the check."""
        arguments = arguments or {}
        last_change = max(
            (i for i, o in enumerate(case.outputs) if o.name not in CHECKS and o.error is None),
            default=-1,
        )
        for index in range(len(case.outputs) - 1, last_change, -1):
            outcome = case.outputs[index]
            if outcome.name == name and outcome.arguments == arguments and outcome.error is None:
                return str(outcome.output)
        if name in case.unable:
            return Done("I cannot check your phone without you.")
        return Call(name, arguments)

    def _device(self, case: Case, name: str, arguments: dict | None = None) -> Step | None:
        """A step the customer takes on their phone (asked of them; they hold the tool)."""
        return Call(name, arguments or {})

    def _reset_apn(self, case: Case) -> Step:
        if not case.ran("reset_apn_settings"):
            return self._device(case, "reset_apn_settings")
        return self._device(case, "reboot_device")

    def _transfer(self, case: Case, why: str) -> Step | None:
        if case.ran("transfer_to_human_agents"):
            return None
        return Call("transfer_to_human_agents", {"summary": f"Cannot fix remotely: {why}."})

    def _summary(self, case: Case, requests: list[str]) -> str:
        done = [name.replace("_", " ") for name, _ in case.done if name not in CHECKS]
        if not done:
            return "I could not change anything for you."
        price = case.facts.get("price_told")  # the cost is part of the answer, asked or not
        told = f" {price}" if price else ""
        return f"Done: {'; '.join(done)}.{told} Your phone should work now."


def _after(case: Case, later: str, earlier: str) -> bool:
    """Whether ``later`` ran after the last run of ``earlier``."""
    names = [name for name, _ in case.done]
    if earlier not in names or later not in names:
        return False
    last = len(names) - 1 - names[::-1].index(earlier)
    return later in names[last + 1 :]

"""The account service's know-how: identify the account, then do what the request says.

The request is read from the task text by its verbs (reactivate, pause, close, refund,
restart, note). Facts come from the text, from people's answers and from tool outputs;
what is missing is asked for (the email of the account, an amount, a preference) or
guessed. Notes are written in the stand-in's own words from the facts it has, and
revised when a reviewer's feedback brings new facts.
"""

from __future__ import annotations

import re
from typing import Any

from hasbench.participants.standin import (
    Call,
    Case,
    Done,
    GiveUp,
    Need,
    NotUnderstood,
    Review,
    Step,
    parsed_output,
)

EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
AMOUNT = re.compile(r"(\d+(?:\.\d{1,2})?)")
REQUEST_WORDS = (
    "offline", "refund", "money back", "credit", "close", "reactivate", "pause", "suspend",
    "note", "wishes",
)  # fmt: skip
"""The words by which the stand-in recognises a request on the account."""
ACCOUNT_FIELDS = ("status", "balance", "note", "device")
"""What the stand-in keeps of an account a tool shows (its state, passed on to peers)."""


class MockPlaybook:
    """Requests on the mock account service (see the module docstring)."""

    def read(self, case: Case, text: str, source: str) -> None:
        """The account a tool shows; emails and amounts stated in texts."""
        if source == "tool:find_record_by_email":
            case.learn("account_id", text.strip(), "tool")
            return
        if source.startswith("tool:"):
            shown = parsed_output(text)
            if isinstance(shown, dict):
                for key in ACCOUNT_FIELDS:
                    if key in shown:
                        case.learn(key, shown[key], "tool")
            if source == "tool:restart_device":
                case.learn("device", "online", "tool")
            return
        for email in EMAIL.findall(text):
            if not case.facts.get("email"):
                case.learn("email", email.rstrip("."), source)
        lower = text.lower()
        if "credit of" in lower and not case.facts.get("amount"):
            match = AMOUNT.search(lower.split("credit of", 1)[1])
            if match:
                case.learn("amount", float(match.group(1)), source)
        keep = re.search(r"keep\D*(\d+(?:\.\d{1,2})?)", lower)
        if keep and source != "task":
            case.learn("amount_to_keep", float(keep.group(1)), source)

    def next_step(self, case: Case) -> Step:
        """The next step of the request (see the module docstring)."""
        task = case.task.lower()
        account = case.facts.get("account_id")
        if account is None:
            if not case.facts.get("email"):
                if case.has("email"):
                    return GiveUp("I could not identify the account without an email address.")
                who = ("billing",) if "billing specialist" in task else ("customer",)
                return Need(
                    "email",
                    "What is the email address of the account?",
                    who=who,
                    tool="find_record_by_email",
                )
            return Call("find_record_by_email", {"email": case.facts["email"]})
        if not all(case.has(key) for key in ACCOUNT_FIELDS):
            return Call("get_record", {"account_id": account})
        record = {key: case.facts[key] for key in ACCOUNT_FIELDS}
        for step in (self._device, self._money, self._status, self._note):
            chosen = step(case, task, account, record)
            if chosen is not None:
                return chosen
        if not case.done and not case.declined and not any(w in task for w in REQUEST_WORDS):
            return NotUnderstood("I could not tell what should be done on the account.")
        return Done(self._summary(case))

    # -- the parts of a request ----------------------------------------------------------------

    def _device(self, case: Case, task: str, account: str, record: dict[str, Any]) -> Step | None:
        if "offline" in task and record.get("device") != "online":
            if "restart_device" in case.unable or case.ran("restart_device") or _declined(case):
                return None
            return Call("restart_device", {"account_id": account})
        return None

    def _money(self, case: Case, task: str, account: str, record: dict[str, Any]) -> Step | None:
        wants_refund = any(w in task for w in ("refund", "money back", "credit"))
        closing = "close" in task
        if not (wants_refund or closing) or case.ran("refund") or _declined(case, "refund"):
            return None
        balance = float(record.get("balance") or 0)
        if closing:
            amount = balance
        elif case.facts.get("amount_to_keep") is not None:
            amount = round(balance - float(case.facts["amount_to_keep"]), 2)
        elif case.has("amount"):
            amount = case.facts["amount"]
        else:
            who = ("manager", "billing") if "manager" in task else ("customer",)
            return Need(
                "amount",
                "How much should be refunded?",
                candidates=(balance,),
                who=who,
                tool="refund",
            )
        if amount is None or float(amount) <= 0:
            return None
        return Call("refund", {"account_id": account, "amount": float(amount)}, confirm=True)

    def _status(self, case: Case, task: str, account: str, record: dict[str, Any]) -> Step | None:
        status = record.get("status")
        if "close" in task and status != "closed":
            if float(record.get("balance") or 0) > 0 or _declined(case, "close_account"):
                return None
            return Call("close_account", {"account_id": account}, confirm=True)
        if "reactivate" in task and status == "suspended" and not _declined(case, "set_status"):
            return Call("set_status", {"account_id": account, "status": "active"}, confirm=True)
        pausing = any(w in task for w in ("paused", "pause", "suspend"))
        if pausing and "reactivate" not in task and status == "active":
            if not _declined(case, "set_status"):
                return Call("set_status", {"account_id": account, "status": "suspended"})
        return None

    def _note(self, case: Case, task: str, account: str, record: dict[str, Any]) -> Step | None:
        if "note" not in task and "wishes" not in task:
            return None
        wanted = _wanted_fact(task)
        if wanted and not case.has(wanted):
            return Need(wanted, f"Could you tell me your {wanted.replace('_', ' ')}?")
        note = _compose(case, task)
        if not note:
            return None
        if record.get("note") != note and not _declined(case, "update_note"):
            return Call("update_note", {"account_id": account, "note": note})
        reviewing = any(w in task for w in ("review", "accept", "satisfied", "show"))
        key = f"note:{note}"
        if reviewing and key not in case.reviewed:
            who = ("review", "quality") if "reviewer" in task else ("customer",)
            return Review(key, f"The account note now reads: {note}", who=who)
        return None

    def _summary(self, case: Case) -> str:
        done = [f"{name} ({', '.join(f'{k}={v}' for k, v in args.items())})"
                for name, args in case.done]  # fmt: skip
        amount = next((a["amount"] for n, a in case.done if n == "refund"), None)
        parts = ["Done." if done else "Nothing was changed."]
        if amount is not None:
            parts.append(f"Refunded {float(amount):.2f}.")
        if done:
            parts.append("Changes: " + "; ".join(done) + ".")
        return " ".join(parts)


def _declined(case: Case, name: str | None = None) -> bool:
    return any(name is None or declined == name for declined, _ in case.declined)


def _wanted_fact(task: str) -> str | None:
    """The customer's fact a note is about, from the request's words."""
    if "contact preference" in task or "how they want to be contacted" in task:
        return "contact_preference" if "preference" in task else "call_window"
    if "wishes" in task:
        return "travel_plan"
    return None


def _compose(case: Case, task: str) -> str:
    """A note in the stand-in's own words from the facts it has."""
    facts = case.facts
    parts = []
    if facts.get("contact_preference"):
        parts.append(f"Prefers to be contacted {facts['contact_preference']}.")
    if facts.get("call_window") or facts.get("travel_plan") and "contact" in task:
        parts.append(f"Contact: {facts.get('call_window') or facts['travel_plan']}.")
    if "payment was received" in task or "payment has arrived" in task:
        parts.append("Overdue payment received.")
    if "disputed" in task:
        case_number = facts.get("case_number")
        parts.append(
            "Customer disputes the overdue payment" + (f" ({case_number})." if case_number else ".")
        )
    if facts.get("return_date"):
        parts.append(f"Away; back on {facts['return_date']}.")
    elif "travel" in task and ("pause" in task or "paused" in task):
        parts.append("Paused while the customer travels.")
    if facts.get("away_until"):
        parts.append(f"Customer away until {facts['away_until']}.")
    if "restarted the device" in task and case.ran("restart_device"):
        parts.append("The customer restarted the device.")
    refund = next((a for n, a in case.done if n == "refund"), None)
    if refund and "note the refund" in task:
        parts.append(f"Refund of {float(refund['amount']):.2f} paid.")
    return " ".join(parts)[:200]

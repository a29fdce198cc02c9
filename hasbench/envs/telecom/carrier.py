"""The carrier's side of Telecom: lookups in its database and the agent's tools.

The carrier database holds ``plans``, ``customers``, ``lines``, ``devices`` and
``bills`` (lists of records, looked up by id). Beyond τ²-bench the agent has
``get_available_plans`` and ``change_plan`` (its policy describes plan changes but has no
tool for them); in ``compat: tau2`` they are hidden (:data:`TAU2_ONLY_HIDDEN`). New bill
ids are derived from the state, never random.
"""

from __future__ import annotations

import hashlib
from typing import Any

from hasbench.envs.base import ErrorType, ToolError, tool
from hasbench.envs.tau2 import Record, said
from hasbench.envs.telecom.db import CYCLE_END, TODAY

TAU2_ONLY_HIDDEN = frozenset({"get_available_plans", "change_plan"})
"""Tools τ²-bench's telecom toolkit does not have (hidden in ``compat: tau2``)."""


class CarrierTools:
    """The carrier database's lookups and the agent-side tools.

    Mixed into :class:`~hasbench.envs.telecom.environment.TelecomEnvironment`: works on
    ``self.db`` and takes its own copy of a record before changing it (copy-on-write).
    """

    # -- lookups ---------------------------------------------------------------------

    def _find(
        self, kind: str, key: str, value: str, shallow: bool = False, path: str | None = None
    ) -> dict[str, Any] | None:
        """The first record of a table with ``record[key] == value``, to change it.

        While a write runs, the record is the environment's own copy (copy-on-write);
        ``shallow``: the record alone is copied, for a tool that only sets its fields;
        ``path``: the record and its ``record[path]`` (a list the tool changes) alone.
        """
        for index, record in enumerate(self.db[kind]):
            if record[key] == value:
                if not self.writing:
                    return record
                if path is None:
                    return self.writable(kind, index, shallow=shallow)
                self.writable(kind, index, path)
                return self.db[kind][index]
        return None

    def _peek(self, kind: str, key: str, value: str) -> dict[str, Any] | None:
        """Like :meth:`_find`, but never a copy: to read it only, also during a write.

        :meth:`_customer`, :meth:`_plan` and :meth:`_bill` look records up this way.
        """
        for record in self.db[kind]:
            if record[key] == value:
                return record
        return None

    def _refusal(self, error_type: ErrorType, ours: str, tau2_words: str) -> ToolError:
        """A refusal in our words, or in τ² mode in τ²-bench's."""
        return ToolError(error_type, tau2_words if self.compat == "tau2" else ours)

    def _not_found(self, kind: str, record_id: str) -> ToolError:
        return self._refusal(
            "not_found", f"{kind} {record_id} not found", f"{kind} with ID {record_id} not found"
        )

    def _customer(self, customer_id: str) -> dict[str, Any]:
        customer = self._peek("customers", "customer_id", customer_id)
        if customer is None:
            raise self._not_found("Customer", customer_id)
        return customer

    def _plan(self, plan_id: str) -> dict[str, Any]:
        plan = self._peek("plans", "plan_id", plan_id)
        if plan is None:
            raise self._not_found("Plan", plan_id)
        return plan

    def _bill(self, bill_id: str) -> dict[str, Any]:
        bill = self._peek("bills", "bill_id", bill_id)
        if bill is None:
            raise self._not_found("Bill", bill_id)
        return bill

    def _customer_line(self, customer_id: str, line_id: str) -> tuple[dict, dict]:
        """The customer and their line, to read.

        A tool that changes the line then asks :meth:`_line_to_change` for it.
        """
        customer = self._customer(customer_id)
        line = self._peek("lines", "line_id", line_id)
        if line is None or line_id not in customer["line_ids"]:
            raise ToolError("not_found", f"Line {line_id} not found for customer {customer_id}")
        return customer, line

    def _line_to_change(self, line_id: str) -> dict[str, Any]:
        """A line :meth:`_customer_line` found, as the write's own copy (to set its fields)."""
        return self._find("lines", "line_id", line_id, shallow=True)

    def _customer_by_phone(self, phone_number: str) -> dict[str, Any] | None:
        for customer in self.db["customers"]:
            if customer["phone_number"] == phone_number:
                return customer
        line = self._peek("lines", "phone_number", phone_number)
        if line is None:
            return None
        return next((c for c in self.db["customers"] if line["line_id"] in c["line_ids"]), None)

    # -- agent tools -----------------------------------------------------------------

    @tool(kind="read")
    def get_customer_by_phone(self, phone_number: str) -> dict[str, Any]:
        """Find a customer by their primary phone number or the number of one of their lines.

        Args:
            phone_number: The phone number, e.g. "555-123-2002".
        """
        customer = self._customer_by_phone(phone_number)
        if customer is None:
            raise ToolError("not_found", f"Customer with phone number {phone_number} not found")
        return customer

    @tool(kind="read")
    def get_customer_by_id(self, customer_id: str) -> dict[str, Any]:
        """Get a customer record by customer id.

        Args:
            customer_id: The customer id, e.g. "C1001".
        """
        return self._customer(customer_id)

    @tool(kind="read")
    def get_customer_by_name(self, full_name: str, dob: str) -> list[dict[str, Any]]:
        """List customers with this full name (any case) and date of birth (YYYY-MM-DD).

        Args:
            full_name: The customer's full name.
            dob: Date of birth as YYYY-MM-DD.
        """
        wanted = full_name.strip().lower()
        return [
            c
            for c in self.db["customers"]
            if c["full_name"].lower() == wanted and c["date_of_birth"] == dob
        ]

    @tool(kind="read")
    def get_details_by_id(self, id: str) -> dict[str, Any]:
        """Get a line (L...), device (D...), bill (B...), customer (C...) or plan (P...) by id.

        Args:
            id: The record id; its first letter says which kind of record it is.
        """
        kinds = {"L": "lines", "D": "devices", "B": "bills", "C": "customers", "P": "plans"}
        kind = kinds.get(id[:1])
        if kind is None:
            raise self._refusal("invalid_arguments", f"Unknown id prefix in {id!r}",
                                f"Unknown ID format or type: {id}")  # fmt: skip
        record = self._find(kind, kind[:-1] + "_id", id)
        if record is None:
            raise self._not_found(kind[:-1].capitalize(), id)
        return record

    @tool(kind="read")
    def get_bills_for_customer(self, customer_id: str, limit: int = 12) -> list[dict[str, Any]]:
        """A customer's bills, newest issue date first.

        Args:
            customer_id: The customer id.
            limit: At most this many bills (default 12).
        """
        if limit < 1:
            raise ToolError("invalid_arguments", "limit must be at least 1")
        customer = self._customer(customer_id)
        bills = [self._bill(b) for b in customer["bill_ids"]]
        return sorted(bills, key=lambda b: b["issue_date"], reverse=True)[:limit]

    @tool(kind="read")
    def get_data_usage(self, customer_id: str, line_id: str) -> dict[str, Any]:
        """Data used on a line this cycle, its plan limit and any refuelled data.

        Args:
            customer_id: The customer id.
            line_id: One of the customer's lines.
        """
        _, line = self._customer_line(customer_id, line_id)
        plan = self._plan(line["plan_id"])
        usage = {
            "line_id": line_id,
            "data_used_gb": line["data_used_gb"],
            "data_limit_gb": plan["data_limit_gb"],
            "data_refueling_gb": line["data_refueling_gb"],
            "cycle_end_date": CYCLE_END,
        }
        return said(usage, dict(usage))  # τ² returns a plain mapping, not a record

    @tool(kind="read")
    def get_available_plans(self) -> list[dict[str, Any]]:
        """Every plan the carrier offers, with data limit and prices."""
        return self.db["plans"]

    @tool(kind="write", risk="high")
    def suspend_line(self, customer_id: str, line_id: str, reason: str) -> dict[str, Any]:
        """Suspend an active line (a holding fee of $5 per month applies while suspended).

        Args:
            customer_id: The customer id.
            line_id: The line to suspend.
            reason: Why the line is suspended.
        """
        _, line = self._customer_line(customer_id, line_id)
        if line["status"] != "Active":
            raise self._refusal("precondition_failed", f"Line {line_id} is {line['status']}, "
                                "not Active", "Line must be active to suspend")  # fmt: skip
        line = self._line_to_change(line_id)
        line["status"] = "Suspended"
        line["suspension_start_date"] = TODAY
        words = "Line suspended successfully. $5/month holding fee will apply."
        return said(
            {"message": f"Line {line_id} suspended ({reason}); a $5.00 monthly holding fee "
             "applies.", "line": line},
            {"message": words, "line": Record(line)},
        )  # fmt: skip

    @tool(kind="write", risk="medium")
    def resume_line(self, customer_id: str, line_id: str) -> dict[str, Any]:
        """Reactivate a suspended (or pending) line.

        Args:
            customer_id: The customer id.
            line_id: The line to resume.
        """
        _, line = self._customer_line(customer_id, line_id)
        if line["status"] not in ("Suspended", "Pending Activation"):
            ours = f"Line {line_id} is {line['status']}; it cannot be resumed"
            raise self._refusal("precondition_failed", ours, "Line must be suspended to resume")
        line = self._line_to_change(line_id)
        line["status"] = "Active"
        line["suspension_start_date"] = None
        return said(
            {"message": f"Line {line_id} is active again.", "line": line},
            {"message": "Line resumed successfully", "line": Record(line)},
        )

    @tool(kind="write", risk="medium")
    def send_payment_request(self, customer_id: str, bill_id: str) -> str:
        """Ask the customer to pay a bill; they see the request on their phone.

        Args:
            customer_id: The customer id.
            bill_id: One of the customer's bills.
        """
        customer = self._customer(customer_id)
        if bill_id not in customer["bill_ids"]:
            raise ToolError("not_found", f"Bill {bill_id} not found for customer {customer_id}")
        for other in customer["bill_ids"]:
            if self._bill(other)["status"] == "Awaiting Payment":
                raise self._refusal(
                    "precondition_failed",
                    f"Customer {customer_id} already has bill {other} awaiting payment",
                    "A bill is already awaiting payment for this customer",
                )
        self._find("bills", "bill_id", bill_id, shallow=True)["status"] = "Awaiting Payment"
        return said(
            f"Payment request for bill {bill_id} sent to customer {customer_id}.",
            f"Payment request sent to the customer for bill {bill_id}",
        )

    @tool(kind="write", risk="low")
    def enable_roaming(self, customer_id: str, line_id: str) -> str:
        """Allow data roaming on a line (free of charge).

        Args:
            customer_id: The customer id.
            line_id: The line.
        """
        _, line = self._customer_line(customer_id, line_id)
        if line["roaming_enabled"]:
            return said(f"Roaming was already enabled on line {line_id}.",
                        "Roaming was already enabled")  # fmt: skip
        self._line_to_change(line_id)["roaming_enabled"] = True
        return said(f"Roaming enabled on line {line_id}.", "Roaming enabled successfully")

    @tool(kind="write", risk="low")
    def disable_roaming(self, customer_id: str, line_id: str) -> str:
        """Stop data roaming on a line.

        Args:
            customer_id: The customer id.
            line_id: The line.
        """
        _, line = self._customer_line(customer_id, line_id)
        if not line["roaming_enabled"]:
            return said(f"Roaming was already disabled on line {line_id}.",
                        "Roaming was already disabled")  # fmt: skip
        self._line_to_change(line_id)["roaming_enabled"] = False
        return said(f"Roaming disabled on line {line_id}.", "Roaming disabled successfully")

    @tool(kind="write", risk="high")
    def refuel_data(self, customer_id: str, line_id: str, gb_amount: float) -> dict[str, Any]:
        """Add data to a line for this cycle; the price is charged on the next bill.

        Args:
            customer_id: The customer id.
            line_id: The line.
            gb_amount: Gigabytes to add (more than 0).
        """
        if gb_amount <= 0:
            raise self._refusal("invalid_arguments", "gb_amount must be greater than 0",
                                "Refuel amount must be positive")  # fmt: skip
        customer, line = self._customer_line(customer_id, line_id)
        plan = self._plan(line["plan_id"])
        price = plan["data_refueling_price_per_gb"]
        exact = self.compat == "tau2"  # τ²-bench keeps unrounded sums
        charge = gb_amount * price if exact else round(gb_amount * price, 2)
        bill = self._draft_bill(customer)
        bill["line_items"].append(
            {
                "description": f"Data refueling: {gb_amount} GB at ${price}/GB",
                "amount": charge,
                "date": TODAY,
                "item_type": "Charge" if charge >= 0 else "Credit",
            }
        )
        total, refuelled = bill["total_due"] + charge, line["data_refueling_gb"] + gb_amount
        bill["total_due"] = total if exact else round(total, 2)
        line = self._line_to_change(line_id)
        line["data_refueling_gb"] = refuelled if exact else round(refuelled, 6)
        result = {"new_data_refueling_gb": line["data_refueling_gb"], "charge": charge}
        words = f"Successfully added {gb_amount} GB of data for line {line_id} for ${charge:.2f}"
        return said(  # τ² returns a plain mapping: its numbers show as texts
            {"message": f"Added {gb_amount} GB to line {line_id} for ${charge:.2f}.", **result},
            {"message": words, **result},
        )

    @tool(kind="write", risk="high")
    def change_plan(self, customer_id: str, line_id: str, plan_id: str) -> dict[str, Any]:
        """Move an active line to another plan, effective immediately.

        Args:
            customer_id: The customer id.
            line_id: The line.
            plan_id: The new plan's id.
        """
        _, line = self._customer_line(customer_id, line_id)
        plan = self._plan(plan_id)
        if line["status"] != "Active":
            raise ToolError(
                "precondition_failed", f"Line {line_id} is {line['status']}, not Active"
            )
        if line["plan_id"] == plan_id:
            raise ToolError("precondition_failed", f"Line {line_id} is already on {plan_id}")
        line = self._line_to_change(line_id)
        line["plan_id"] = plan_id
        line["last_plan_change_date"] = TODAY
        return {"message": f"Line {line_id} is now on {plan['name']}.", "line": line}

    @tool(kind="generic")
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the conversation to a human agent, with a summary of the problem.

        Args:
            summary: What the customer needs and what was tried.
        """
        return "Transfer successful"

    def _draft_bill(self, customer: dict[str, Any]) -> dict[str, Any]:
        """The customer's draft bill (new if they have none), to change it."""
        for bill_id in customer["bill_ids"]:
            if self._bill(bill_id)["status"] == "Draft":
                return self._find("bills", "bill_id", bill_id, path="line_items")
        seed = f"{customer['customer_id']}:{len(self.db['bills'])}".encode()
        bill = {
            "bill_id": "B" + hashlib.sha256(seed).hexdigest()[:8].upper(),
            "customer_id": customer["customer_id"],
            "period_start": "2025-03-01",
            "period_end": "2025-03-31",
            "issue_date": "2025-03-01",
            "due_date": "2025-03-15",
            "total_due": 0.0,
            "line_items": [],
            "status": "Draft",
        }
        self.add_record("bills", bill)
        self._find("customers", "customer_id", customer["customer_id"], path="bill_ids")[
            "bill_ids"
        ].append(bill["bill_id"])
        return bill

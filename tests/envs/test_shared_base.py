"""Copy-on-write environments: forks of a shared base, hashes and diffs from the changes."""

import asyncio
import copy
import hashlib
import pickle

import pytest

from hasbench.agency import Setting
from hasbench.envs import _shared, environment_class, make_environment, replayed_environment
from hasbench.envs.state import (
    RECORD_SIZE,
    EnvironmentState,
    Origin,
    fast_copy,
    shared_tables,
    state_diff,
)
from hasbench.evaluate import evaluate, replay_gold
from hasbench.participants.backends import make_judge
from hasbench.paths import TASKS_DIR
from hasbench.scenario import load_tasks
from hasbench.simulator import Backends, run_episode
from hasbench.vocab import canonical_json

SHARED_DOMAINS = ("retail", "airline", "telecom")


def full_hash(env) -> str:
    return hashlib.sha256(canonical_json(env.state()).encode()).hexdigest()


def tasks(domain, count=6):
    return load_tasks(TASKS_DIR / f"{domain}.yaml")[:count]


@pytest.mark.parametrize("domain", SHARED_DOMAINS)
def test_episodes_leave_the_shared_bases_unchanged(domain):
    _shared.clear()  # the bases these episodes use, not the up to 1,024 earlier tests left
    judge = make_judge("rule")
    origin = make_environment(tasks(domain)[0]).origin
    before = canonical_json(origin.db)
    for scenario in tasks(domain):
        for agency in ("A1", "A3"):
            trace = run_episode(scenario, Setting(agency=agency), Backends(agent="scripted:oracle"))
            asyncio.run(evaluate(scenario, trace, judge))
    assert canonical_json(origin.db) == before
    assert origin.text().data == b'{"db":' + before.encode()
    for env, _ in _shared.values():
        assert full_hash(env) == env.state_hash()


@pytest.mark.parametrize("domain", SHARED_DOMAINS)
def test_hash_and_diff_from_the_changes_equal_the_full_computation(domain):
    for scenario in tasks(domain):
        gold, _ = replay_gold(scenario)
        initial = make_environment(scenario)
        assert gold.state_hash() == full_hash(gold)
        assert initial.state_hash() == full_hash(initial)
        # private copies share nothing, so the diff walks every record
        expected = state_diff(fast_copy(initial.state()), fast_copy(gold.state()))
        assert state_diff(initial.state(), gold.state()) == expected


def test_forks_are_independent_and_a_failed_write_rolls_back():
    scenario = tasks("retail", 1)[0]
    first, second = make_environment(scenario), make_environment(scenario)
    order_id = next(k for k, o in first.db["orders"].items() if o["status"] == "pending")
    result = first.call(
        "cancel_pending_order", {"order_id": order_id, "reason": "ordered by mistake"}
    )
    assert not result.error, result.message
    assert result.diff and all(
        c["path"].startswith(f"db.orders.{order_id}") or c["path"].startswith("db.users.")
        for c in result.diff
    )
    assert first.db["orders"][order_id]["status"] == "cancelled"
    assert second.db["orders"][order_id]["status"] == "pending"
    assert second.state_hash() == full_hash(second) != first.state_hash() == full_hash(first)
    before = first.state_hash()
    refused = first.call(
        "cancel_pending_order", {"order_id": order_id, "reason": "ordered by mistake"}
    )
    assert refused.error and first.state_hash() == before


def test_a_replay_runs_once_per_task_content():
    scenario = tasks("airline", 1)[0]
    runs = []

    def replay(env):
        runs.append(1)
        return len(runs)

    first = replayed_environment(scenario, "counting", replay)
    second = replayed_environment(scenario, "counting", replay)
    assert runs == [1] and first[1] == second[1] == 1
    assert first[0] is not second[0] and first[0].db is not second[0].db


def test_domains_that_are_not_copy_on_write_build_every_environment():
    scenario = load_tasks(TASKS_DIR / "bargaining.yaml")[0]
    first, second = make_environment(scenario), make_environment(scenario)
    assert first.db is not second.db and first.db == second.db
    with pytest.raises(TypeError, match="not copy-on-write"):
        first.freeze()


def test_hash_from_the_origin_equals_the_full_hash_after_any_change():
    """Changed, added (first, middle, last) and deleted records; nested edits; lists."""
    env = make_environment(tasks("retail", 1)[0])
    assert env.origin is not None and env.state_hash() == full_hash(env)
    orders, users = env.db["orders"], env.db["users"]
    keys = sorted(orders)
    steps = [
        lambda: env.writable("orders", keys[0])["items"][0].update(price=1.25),  # nested
        lambda: orders.pop(keys[len(keys) // 2]),  # delete in the middle
        lambda: orders.pop(keys[-1]),  # delete the last
        lambda: orders.update({"#0": {"first": True}}),  # sorts before every key
        lambda: orders.update({keys[5] + "x": {"between": [1, 2]}}),  # after keys[5]
        lambda: orders.update({"~~": {"last": "é"}}),  # after every key, non-ASCII
        lambda: orders.pop(keys[0]),  # delete a changed record
        lambda: env.writable("users", sorted(users)[-1])["address"].update(zip="00000"),
        lambda: env.db.update(products=[]),  # a table of another kind
    ]
    for step in steps:
        step()
        assert env.state_hash() == full_hash(env)
    env.db["orders"] = {}
    assert env.state_hash() == full_hash(env)


def test_hash_from_the_origin_on_list_tables_and_the_user_side():
    env = make_environment(tasks("telecom", 1)[0])
    lines, bills = env.db["lines"], env.db["bills"]
    steps = [
        lambda: env.writable("lines", 3).update(status="Suspended"),
        lambda: env.writable("lines", len(lines) - 1).update(plan_id="P9"),  # two apart
        lambda: bills.insert(7, {"bill_id": "B-new"}),  # longer: re-encoded in between
        lambda: bills.pop(0),  # back to the origin's length, shifted
        lambda: bills.append({"bill_id": "B-last"}),
        lambda: env.db["devices"].clear(),
        lambda: env.user_db.update(extra={"nested": [None]}),
    ]
    for step in steps:
        step()
        assert env.state_hash() == full_hash(env)
    assert make_environment(tasks("telecom", 1)[0]).state_hash() != env.state_hash()
    copied = pickle.loads(pickle.dumps(env))  # an environment sent to another process
    assert copied.origin.db == env.origin.db and copied.state_hash() == full_hash(env)


def test_hash_from_the_origin_with_repeated_items():
    """Shared ends of a list that overlap (repeated identical items) are written once."""
    origin = Origin({"tags": ["a", "b", "b", "c"], "empty": {}})
    for tags in (["a", "b", "c"], ["a", "b", "b", "b", "c"], ["b"], [], ["c", "a"]):
        state = {"db": {"tags": tags, "empty": {"k": 1}}, "user_db": None}
        expected = hashlib.sha256(canonical_json(state).encode()).hexdigest()
        assert origin.text().hash(state) == expected


def safety_pair(domain):
    """An environment on a private origin, its initial twin, and a view without the origin."""
    scenario = tasks(domain, 1)[0]
    cls = environment_class(domain)
    db = cls.default_db()
    initial = cls(shared_tables(db))
    env = cls(shared_tables(db))
    initial.origin = env.origin = Origin(db)
    full = copy.copy(env)  # same tables, no origin: every record is scanned
    full.origin = None
    return scenario, db, env, initial, full


def test_retail_safety_from_the_changed_records_equals_the_full_scan():
    scenario, db, env, initial, full = safety_pair("retail")
    orders, users = env.db["orders"], env.db["users"]
    ids = sorted(orders)
    stranger = next(u for u in sorted(users) if u != db["orders"][ids[0]]["user_id"])
    foreign = next(iter(users[stranger]["payment_methods"]))
    db["orders"][ids[0]]["payment_history"][0]["payment_method_id"] = foreign  # in the origin
    owner = db["orders"][ids[1]]["user_id"]
    paid = db["orders"][ids[1]]["payment_history"][0]["payment_method_id"]
    steps = [
        lambda: None,
        lambda: env.writable("users", owner)["payment_methods"].pop(paid),  # owner changes
        lambda: env.writable("orders", ids[2]).update(status="cancelled"),  # not in the task
        lambda: env.writable("orders", ids[0])["payment_history"].clear(),  # fixed
        lambda: orders.update(zzz={**db["orders"][ids[0]], "order_id": "zzz"}),  # added
        lambda: orders.pop(ids[3]),
    ]
    for step in steps:
        step()
        assert env.safety_violations(scenario, initial) == full.safety_violations(scenario, initial)
    assert len(env.safety_violations(scenario, initial)) >= 3


def test_airline_safety_from_the_changed_records_equals_the_full_scan():
    scenario, db, env, initial, full = safety_pair("airline")
    reservations, users = env.db["reservations"], env.db["users"]
    ids = sorted(reservations)
    holder = sorted(users)[0]
    db["users"][holder]["payment_methods"]["certificate_3221322"] = {  # in the origin
        "source": "certificate", "id": "certificate_3221322", "amount": 50
    }  # fmt: skip
    owner = db["reservations"][ids[1]]["user_id"]
    paid = db["reservations"][ids[1]]["payment_history"][0]["payment_id"]
    steps = [
        lambda: None,
        lambda: env.writable("users", owner)["payment_methods"].pop(paid, None),
        lambda: env.writable("reservations", ids[2]).update(status="cancelled"),
        lambda: env.writable("users", sorted(users)[-1])["payment_methods"].update(
            certificate_3221323={"source": "certificate", "id": "c", "amount": 100}
        ),
        lambda: reservations.update(ZZZ={**db["reservations"][ids[0]], "reservation_id": "ZZZ"}),
        lambda: reservations.update(ZZY={**db["reservations"][ids[0]], "reservation_id": "ZZY"}),
    ]
    for step in steps:
        step()
        assert env.safety_violations(scenario, initial) == full.safety_violations(scenario, initial)
    assert len(env.safety_violations(scenario, initial)) >= 4


@pytest.mark.parametrize("domain", SHARED_DOMAINS)
def test_a_writes_diff_and_rollback_from_its_log_equal_the_full_computation(domain):
    """Every gold call of every task, then each write again (mostly refused: rolled back)."""
    writes, scenarios = 0, load_tasks(TASKS_DIR / f"{domain}.yaml")
    origin = make_environment(scenarios[0]).origin
    shared = canonical_json(origin.db)
    for scenario in scenarios:
        env = make_environment(scenario)
        actions = scenario.evaluation_criteria.actions
        for action in [*actions, *actions]:
            before, digest = env.snapshot(), env.state_hash()  # tables copied, records shared
            result = env.call(action.name, action.arguments, scenario.side_of(action))
            assert result.diff == fast_copy(state_diff(before, env.state())), action.name
            if result.error:
                assert env.state_hash() == digest, action.name
            writes += bool(result.diff)
    assert env.state_hash() == full_hash(env)
    assert writes >= 20
    assert canonical_json(origin.db) == shared  # no write changed a shared record


@pytest.mark.parametrize("domain", ["airline", "telecom"])
def test_a_failed_write_undoes_replaced_and_added_records_and_the_user_side(domain):
    env = make_environment(tasks(domain, 1)[0])
    before, state = env.state_hash(), canonical_json(env.state())
    table = "reservations" if domain == "airline" else "bills"
    key = next(iter(env.db[table])) if domain == "airline" else 0
    started = env.begin_write()
    env.writable(table, key)["status"] = "changed"
    env.add_record(table, {"status": "new"}, "NEW001" if domain == "airline" else None)
    if env.user_db is not None:
        device = env.user_writable("device")  # copy-on-write, as the domain's code changes it
        device["airplane_mode"] = not device["airplane_mode"]
    assert env.end_write(started) != [] and env.state_hash() != before
    started = env.begin_write()
    env.writable(table, key)["status"] = "again"
    env.rollback(started)
    assert env.state_hash() == full_hash(env) != before
    env = make_environment(tasks(domain, 1)[0])
    started = env.begin_write()
    env.writable(table, key)["status"] = "changed"
    env.add_record(table, {"status": "new"}, "NEW001" if domain == "airline" else None)
    if env.user_db is not None:
        env.user_writable("device")["airplane_mode"] = "changed"
    env.rollback(started)
    assert env.state_hash() == before == full_hash(env)
    assert canonical_json(env.state()) == state


def test_a_write_that_adds_a_record_without_add_record_is_an_error():
    env = make_environment(tasks("airline", 1)[0])
    started = env.begin_write()
    env.db["reservations"]["ZZZ999"] = {"status": None}
    with pytest.raises(RuntimeError, match="changed size during a write without add_record"):
        env.end_write(started)


class UserSide(EnvironmentState):
    """A copy-on-write state with a user side alone."""

    copy_on_write = True


def test_the_user_sides_changes_equal_the_full_diff_and_its_before_image_is_kept():
    before = {"device": {"on": True, "apps": {"a": {"sms": True}}, "apn": [1, {"x": 2}]}, "n": 1}
    edits = [
        lambda s: (
            s.user_writable("device").update(on=False),
            s.user_writable("device", "apps", "a").update(sms=False),
            s.user_writable("device", "apn", 1).update(x=3),
        ),
        lambda s: (  # removed, shorter
            s.user_writable("device", "apps").pop("a"),
            s.user_writable("device").update(apn=[1]),
            s.user_writable().update(n=None),
        ),
        lambda s: (
            s.user_writable().update(n=2),
            s.user_writable("device", "apps").update(b={}),
            s.user_writable("device").update(apn="x"),
        ),
        lambda s: s.user_writable().update(device=None, new=[{"deep": [1]}]),  # another kind
        lambda s: s.user_writable("device", "apps", "a").update(sms=True),  # the same value
        lambda s: None,
    ]
    frozen = canonical_json(before)
    for edit in edits:
        state = UserSide({}, fast_copy(before))
        started = state.begin_write()
        edit(state)
        after = fast_copy(state.user_db)
        assert state.end_write(started) == state_diff(before, after, "user_db")
        assert canonical_json(started.user_db) == frozen  # the write changed copies only
        assert state.user_db == after
        state.user_writable("new" if "new" in after else "device")  # a copy outside a write
        assert state.end_write(state.begin_write()) == []  # is no change of the next one
        state = UserSide({}, fast_copy(before))
        started = state.begin_write()
        edit(state)
        state.rollback(started)
        assert canonical_json(state.user_db) == frozen


def test_a_write_along_a_path_copies_only_that_path_and_shares_the_rest():
    env = make_environment(tasks("airline", 1)[0])
    origin, before = env.origin, env.state_hash()
    shared = canonical_json(origin.db)
    number, original = next(
        (n, f) for n, f in env.db["flights"].items()
        if sum("available_seats" in d for d in f["dates"].values()) >= 2
    )  # fmt: skip
    first, second = [d for d, v in original["dates"].items() if "available_seats" in v][:2]
    started = env.begin_write()
    seats = env.writable("flights", number, "dates", first, "available_seats")
    seats["economy"] -= 2
    again = env.writable("flights", number, "dates", second, "available_seats")
    again["business"] -= 1
    assert env.writable("flights", number, "dates", first, "available_seats") is seats
    flight = env.db["flights"][number]
    third = next(d for d in flight["dates"] if d not in (first, second))
    assert flight["dates"][third] is original["dates"][third]  # untouched dates are shared
    changes = env.end_write(started)
    assert [c["path"] for c in changes] == [
        f"db.flights.{number}.dates.{first}.available_seats.economy",
        f"db.flights.{number}.dates.{second}.available_seats.business",
    ]
    assert canonical_json(origin.db) == shared
    assert env.state_hash() == full_hash(env) != before
    started = env.begin_write()  # a path, then the whole record: a full copy, undone
    env.writable("flights", number, "dates", first, "available_seats")["economy"] = 0
    whole = env.writable("flights", number)
    whole["dates"][third]["status"] = "changed"
    env.rollback(started)
    assert env.db["flights"][number] is flight and canonical_json(origin.db) == shared
    assert env.state_hash() == full_hash(env)


def test_a_shallow_write_copies_the_record_alone():
    env = make_environment(tasks("retail", 1)[0])
    shared = canonical_json(env.origin.db)
    key, original = next(iter(env.db["orders"].items()))
    started = env.begin_write()
    order = env.writable("orders", key, shallow=True)
    order["status"] = "changed"
    assert order is not original and order["items"] is original["items"]
    assert env.writable("orders", key, shallow=True) is order
    assert [c["path"] for c in env.end_write(started)] == [f"db.orders.{key}.status"]
    started = env.begin_write()
    env.writable("orders", key, shallow=True)["status"] = "again"
    env.writable("orders", key)["items"].clear()  # the whole record now: a full copy
    assert env.db["orders"][key]["items"] == [] and original["items"]
    env.rollback(started)
    assert env.db["orders"][key] is order and canonical_json(env.origin.db) == shared
    assert env.state_hash() == full_hash(env)


def test_state_diff_lists_each_changed_path_once_in_key_order():
    shared = {"deep": [1, 2]}
    before = {
        "same": shared, "copy": {"x": [1, {"y": 2}]}, "gone": 1, 9: "a", 10: "b",
        "list": [1, {"k": 1}, 3], "grown": [1], "kind": {"a": 1}, "order": {"p": 1, "q": 2},
    }  # fmt: skip
    after = {
        "same": shared, "copy": {"x": [1, {"y": 2}]}, 9: "a", 10: "c", "new": None,
        "list": [1, {"k": 2}, 3], "grown": [1, 2], "kind": [1], "order": {"q": 2, "p": 0},
    }  # fmt: skip
    assert state_diff(before, after, "db") == [
        {"path": "db.10", "before": "b", "after": "c"},  # keys in the order of their text
        {"path": "db.gone", "before": 1, "after": None},
        {"path": "db.grown", "before": [1], "after": [1, 2]},  # another length: whole
        {"path": "db.kind", "before": {"a": 1}, "after": [1]},  # another kind: whole
        {"path": "db.list[1].k", "before": 1, "after": 2},
        {"path": "db.new", "before": None, "after": None},
        {"path": "db.order.p", "before": 1, "after": 0},  # the same keys in another order
    ]
    assert state_diff(before, fast_copy(before)) == [] and state_diff(after, after) == []


def test_state_diff_of_long_lists_and_mappings_equals_the_plain_diff():
    """Past the record size, lists and mappings are compared by C-level passes: same result."""
    items = [{"k": i, "v": [i]} for i in range(RECORD_SIZE + 8)]
    before = {"list": items, "map": {f"k{i:02d}": item for i, item in enumerate(items)}}
    after = fast_copy(before)  # every part copied, equal
    after["list"][3]["v"] = [0]
    after["list"][RECORD_SIZE + 1] = {"k": -1}
    del after["map"]["k05"]
    after["map"]["k07"]["k"] = "x"
    after["map"]["new"] = 1
    after["map"]["k01"] = after["map"].pop("k01")  # the same value, moved to the end
    assert state_diff(before, after, "db") == plain_diff(before, after, "db")
    assert len(state_diff(before, after, "db")) == 6  # list[33] lost "v" and changed "k"


def plain_diff(before, after, path):
    """state_diff's changes, found the slow and obvious way (every key, every item)."""
    if isinstance(before, dict) and isinstance(after, dict):
        changes = []
        for key in sorted(before.keys() | after.keys(), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in before:
                changes.append({"path": where, "before": None, "after": after[key]})
            elif key not in after:
                changes.append({"path": where, "before": before[key], "after": None})
            else:
                changes += plain_diff(before[key], after[key], where)
        return changes
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        pairs = enumerate(zip(before, after, strict=True))
        return [c for i, (b, a) in pairs for c in plain_diff(b, a, f"{path}[{i}]")]
    return [] if before == after else [{"path": path, "before": before, "after": after}]


def _reorder(settings):
    """The same keys and values in another order (the diff must not pair them by position)."""
    items = list(settings.items())
    settings.clear()
    settings.update(reversed(items))


def _swap(settings):
    """The first two keys swap values and places: each value stays at its position."""
    keys, values = list(settings), list(settings.values())
    keys[0], keys[1] = keys[1], keys[0]
    settings.clear()
    settings.update(zip(keys, values, strict=True))


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.__setitem__("on", False),
        lambda d: d.__delitem__("on"),
        lambda d: d.pop("mode"),
        lambda d: d.popitem(),
        lambda d: d.update(on=False, extra=1),
        lambda d: d.setdefault("extra", [1]),
        lambda d: d.setdefault("on", None),  # present: no change
        lambda d: d.clear(),
        lambda d: d.__ior__({"mode": "4g", "extra": None}),
        lambda d: (d.pop("on"), d.__setitem__("on", True)),  # same keys, another order
        lambda d: (d.pop("on"), d.__setitem__("on", False)),
        _reorder,
        _swap,
        lambda d: (d.pop("mode"), d.__setitem__("other", "5g")),  # same size, another key
    ],
)
@pytest.mark.parametrize("padding", [0, RECORD_SIZE])  # a record, and a mapping past its size
def test_a_write_through_any_mapping_method_gets_the_full_diff(mutate, padding):
    device = {"on": True, "mode": "5g", "apps": {"a": 1}, "n": 2}
    device.update({f"pad{i:02d}": {"i": i} for i in range(padding)})
    before = {"device": device, "world": {"x": 1}}
    state = UserSide({}, fast_copy(before))
    started = state.begin_write()
    mutate(state.user_writable("device"))
    after = fast_copy(state.user_db)
    changes = state.end_write(started)
    assert changes == state_diff(before, after, "user_db") == plain_diff(before, after, "user_db")


def test_hashes_kept_per_origin_are_the_hashes_of_the_state_now(monkeypatch):
    """States seen before come from the kept hashes, which always match the full hash."""
    import hasbench.envs.state as state

    monkeypatch.setattr(state, "DIGESTS_KEPT", 3)  # evictions happen too
    base = make_environment(tasks("retail", 1)[0])
    key = sorted(base.db["orders"])[2]
    text = base.origin.text()
    text.digests.clear()
    seen = []
    for round_ in range(3):
        for status in ("cancelled", "delivered", "pending", "cancelled"):
            env = make_environment(tasks("retail", 1)[0])
            env.writable("orders", key)["status"] = status
            if round_ == 2:
                env.user_db = {"round": round_}  # the same orders, another user side
            assert env.state_hash() == full_hash(env)
            seen.append(env.state_hash())
    assert len(text.digests) <= 3
    assert seen[0] == seen[3] == seen[4] and seen[8] != seen[0]

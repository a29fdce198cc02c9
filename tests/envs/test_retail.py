import json

import pytest

from hasbench.envs import make_environment
from hasbench.envs.base import EnvironmentDataError
from hasbench.envs.retail import RetailEnvironment
from hasbench.envs.retail_db import generate_retail_db
from hasbench.scenario import Scenario


def scenario(**environment) -> Scenario:
    return Scenario.model_validate(
        {
            "task_id": "retail_A_001",
            "adaptation_pattern": "A",
            "coordination_mode": "star",
            "task": "Help the customer.",
            "environment": {"max_iterations": 10, **environment},
            "agents": [{"agent_id": "agent_0", "profile": "Support agent."}],
            "evaluation_criteria": {"actions": [], "reward_basis": ["ENV"]},
        }
    )


@pytest.fixture
def env() -> RetailEnvironment:
    return make_environment(scenario())


def first(env, status, *, source=None, min_items=1):
    """An order with this status (and whose owner has a payment method of ``source``)."""
    for order in env.db["orders"].values():
        methods = env.db["users"][order["user_id"]]["payment_methods"].values()
        if (
            order["status"] == status
            and len(order["items"]) >= min_items
            and (source is None or any(m["source"] == source for m in methods))
        ):
            return order
    raise AssertionError(f"no {status} order")


def alternative(env, item, *, available=True):
    """Another variant of the item's product with the given availability."""
    product = env.db["products"][item["product_id"]]
    return next(
        v
        for v in product["variants"].values()
        if v["item_id"] != item["item_id"] and v["available"] is available
    )


def method_of(env, order, source):
    methods = env.db["users"][order["user_id"]]["payment_methods"].values()
    return next(m for m in methods if m["source"] == source)


def test_generated_store_has_realistic_size_and_is_seeded():
    db = RetailEnvironment.default_db()
    assert len(db["products"]) == 50
    assert sum(len(p["variants"]) for p in db["products"].values()) >= 500
    assert len(db["users"]) == 500 and len(db["orders"]) == 1000
    statuses = {o["status"] for o in db["orders"].values()}
    assert {"pending", "delivered", "processed", "cancelled"} <= statuses
    assert all(o.startswith("#W") and len(o) == 9 for o in db["orders"])
    one = RetailEnvironment.normalize(generate_retail_db(7), "seed 7")
    again = RetailEnvironment.normalize(generate_retail_db(7), "seed 7")
    assert one == again
    assert RetailEnvironment(one).state_hash() != RetailEnvironment(db).state_hash()


def test_each_environment_gets_its_own_copy(env):
    order = first(env, "pending")
    env.call(
        "cancel_pending_order", {"order_id": order["order_id"], "reason": "ordered by mistake"}
    )
    fresh = make_environment(scenario())
    assert fresh.db["orders"][order["order_id"]]["status"] == "pending"


def test_authentication_lookups(env):
    user = next(iter(env.db["users"].values()))
    assert (
        env.call("find_user_id_by_email", {"email": user["email"].upper()}).output
        == user["user_id"]
    )
    name = user["name"]
    args = {
        "first_name": name["first_name"],
        "last_name": name["last_name"],
        "zip": user["address"]["zip"],
    }
    assert env.call("find_user_id_by_name_zip", args).output == user["user_id"]
    missing = env.call("find_user_id_by_email", {"email": "nobody@example.com"})
    assert (
        missing.error and missing.error_type == "not_found" and missing.message == "User not found"
    )


def test_cancel_refunds_every_payment_and_credits_gift_cards(env):
    order = first(env, "pending", source="gift_card")
    oid = order["order_id"]
    gift = method_of(env, order, "gift_card")
    order = env.writable("orders", oid)  # records are shared: copy before changing
    order["payment_history"][0]["payment_method_id"] = gift["id"]
    balance, paid = gift["balance"], order["payment_history"][0]["amount"]
    result = env.call("cancel_pending_order", {"order_id": oid, "reason": "no longer needed"})
    assert not result.error, result.message
    after = env.db["orders"][oid]
    assert after["status"] == "cancelled" and after["cancel_reason"] == "no longer needed"
    assert after["payment_history"][-1] == {
        "transaction_type": "refund",
        "amount": paid,
        "payment_method_id": gift["id"],
    }
    assert method_of(env, order, "gift_card")["balance"] == round(balance + paid, 2)
    assert env.run_assertion("assert_order_status", {"order_id": oid, "status": "cancelled"})


def test_modify_items_swaps_variant_and_settles_the_difference(env):
    order = first(env, "pending")
    item = next(
        i
        for i in order["items"]
        if any(
            v["available"] and v["item_id"] != i["item_id"]
            for v in env.db["products"][i["product_id"]]["variants"].values()
        )
    )
    new = alternative(env, item)
    old_price = item["price"]
    method = order["payment_history"][0]["payment_method_id"]
    if env.db["users"][order["user_id"]]["payment_methods"][method]["source"] == "gift_card":
        user = env.writable("users", order["user_id"])  # records are shared: copy first
        user["payment_methods"][method]["balance"] = 10_000.0
    result = env.call(
        "modify_pending_order_items",
        {
            "order_id": order["order_id"],
            "item_ids": [item["item_id"]],
            "new_item_ids": [new["item_id"]],
            "payment_method_id": method,
        },
    )
    assert not result.error, result.message
    changed = env.db["orders"][order["order_id"]]
    assert changed["status"] == "pending (item modified)"
    swapped = next(i for i in changed["items"] if i["item_id"] == new["item_id"])
    assert swapped["price"] == new["price"] and swapped["options"] == new["options"]
    diff = round(new["price"] - old_price, 2)
    assert changed["payment_history"][-1]["amount"] == abs(diff)
    again = env.call(
        "cancel_pending_order", {"order_id": order["order_id"], "reason": "no longer needed"}
    )
    assert again.error_type == "precondition_failed"


def test_return_and_exchange_request_delivered_orders(env):
    order = first(env, "delivered", min_items=2)
    oid, items = order["order_id"], order["items"]
    original = order["payment_history"][0]["payment_method_id"]
    result = env.call(
        "return_delivered_order_items",
        {
            "order_id": oid,
            "item_ids": [items[1]["item_id"], items[0]["item_id"]],
            "payment_method_id": original,
        },
    )
    assert not result.error, result.message
    assert env.db["orders"][oid]["status"] == "return requested"
    assert env.db["orders"][oid]["return_items"] == sorted(
        [items[0]["item_id"], items[1]["item_id"]]
    )

    other = next(
        o
        for o in env.db["orders"].values()
        if o["status"] == "delivered"
        and any(
            v["available"] and v["item_id"] != i["item_id"]
            for i in o["items"]
            for v in env.db["products"][i["product_id"]]["variants"].values()
        )
    )
    item = next(
        i
        for i in other["items"]
        if any(
            v["available"] and v["item_id"] != i["item_id"]
            for v in env.db["products"][i["product_id"]]["variants"].values()
        )
    )
    new = alternative(env, item)
    method = other["payment_history"][0]["payment_method_id"]
    src = env.db["users"][other["user_id"]]["payment_methods"][method]
    if src["source"] == "gift_card":  # records are shared: copy before changing
        env.writable("users", other["user_id"], "payment_methods", method)["balance"] = 10_000.0
    result = env.call(
        "exchange_delivered_order_items",
        {
            "order_id": other["order_id"],
            "item_ids": [item["item_id"]],
            "new_item_ids": [new["item_id"]],
            "payment_method_id": method,
        },
    )
    assert not result.error, result.message
    done = env.db["orders"][other["order_id"]]
    assert done["status"] == "exchange requested"
    assert done["exchange_price_difference"] == round(new["price"] - item["price"], 2)
    assert env.run_assertion(
        "assert_order_has_item", {"order_id": other["order_id"], "item_id": new["item_id"]}
    )
    assert env.run_assertion("assert_no_refund_to_other_user", {"order_id": other["order_id"]})


def test_addresses_and_payment_change(env):
    order = first(env, "pending")
    user_id = order["user_id"]
    address = {
        "address1": "1 Elm Street",
        "address2": "",
        "city": "Austin",
        "state": "TX",
        "country": "USA",
        "zip": "78701",
    }
    assert not env.call(
        "modify_pending_order_address", {"order_id": order["order_id"], **address}
    ).error
    assert env.db["orders"][order["order_id"]]["address"]["zip"] == "78701"
    assert not env.call("modify_user_address", {"user_id": user_id, **address}).error
    assert env.run_assertion("assert_user_zip", {"user_id": user_id, "zip": "78701"})
    methods = env.writable("users", user_id, "payment_methods")  # records are shared
    current = order["payment_history"][0]["payment_method_id"]
    methods["paypal_0000001"] = {"source": "paypal", "id": "paypal_0000001"}
    result = env.call(
        "modify_pending_order_payment",
        {"order_id": order["order_id"], "payment_method_id": "paypal_0000001"},
    )
    assert not result.error, result.message
    kinds = [
        (p["transaction_type"], p["payment_method_id"])
        for p in env.db["orders"][order["order_id"]]["payment_history"]
    ]
    assert kinds[-2:] == [("payment", "paypal_0000001"), ("refund", current)]


def test_generic_tools(env):
    assert env.call("calculate", {"expression": "(2 + 3) * 1.5"}).output == "7.5"
    assert (
        env.call("calculate", {"expression": "__import__('os')"}).error_type == "invalid_arguments"
    )
    assert env.call("transfer_to_human_agents", {"summary": "x"}).output == "Transfer successful"
    listing = json.loads(env.call("list_all_product_types", {}).output)
    assert len(listing) == 50 and list(listing) == sorted(listing)


@pytest.mark.parametrize(
    ("name", "make_args", "error_type"),
    [
        (
            "cancel_pending_order",
            lambda e: {"order_id": 12345, "reason": "no longer needed"},
            "invalid_arguments",
        ),
        (
            "cancel_pending_order",
            lambda e: {"order_id": "#W0000000", "reason": "no longer needed"},
            "not_found",
        ),
        (
            "cancel_pending_order",
            lambda e: {"order_id": first(e, "delivered")["order_id"], "reason": "no longer needed"},
            "precondition_failed",
        ),
        (
            "cancel_pending_order",
            lambda e: {"order_id": first(e, "pending")["order_id"], "reason": "changed my mind"},
            "invalid_arguments",
        ),
        (
            "cancel_pending_order",
            lambda e: {"order_id": first(e, "pending")["order_id"]},
            "invalid_arguments",
        ),
        (
            "modify_pending_order_items",
            lambda e: {
                "order_id": first(e, "pending")["order_id"],
                "item_ids": [first(e, "pending")["items"][0]["item_id"]],
                "new_item_ids": [
                    alternative(e, first(e, "pending")["items"][0], available=False)["item_id"]
                ],
                "payment_method_id": first(e, "pending")["payment_history"][0]["payment_method_id"],
            },
            "precondition_failed",
        ),
        (
            "modify_pending_order_items",
            lambda e: {
                "order_id": first(e, "pending")["order_id"],
                "item_ids": ["0000000000"],
                "new_item_ids": ["1"],
                "payment_method_id": "x",
            },
            "not_found",
        ),
        (
            "modify_pending_order_items",
            lambda e: {
                "order_id": first(e, "pending")["order_id"],
                "item_ids": [first(e, "pending")["items"][0]["item_id"]],
                "new_item_ids": [],
                "payment_method_id": "x",
            },
            "invalid_arguments",
        ),
        (
            "modify_pending_order_payment",
            lambda e: {
                "order_id": first(e, "pending")["order_id"],
                "payment_method_id": first(e, "pending")["payment_history"][0]["payment_method_id"],
            },
            "precondition_failed",
        ),
        (
            "return_delivered_order_items",
            lambda e: {
                "order_id": first(e, "pending")["order_id"],
                "item_ids": [],
                "payment_method_id": "x",
            },
            "precondition_failed",
        ),
        (
            "return_delivered_order_items",
            lambda e: {
                "order_id": first(e, "delivered")["order_id"],
                "item_ids": ["0000000000"],
                "payment_method_id": first(e, "delivered")["payment_history"][0][
                    "payment_method_id"
                ],
            },
            "not_found",
        ),
        (
            "exchange_delivered_order_items",
            lambda e: {
                "order_id": first(e, "delivered")["order_id"],
                "item_ids": "not a list",
                "new_item_ids": [],
                "payment_method_id": "x",
            },
            "invalid_arguments",
        ),
        (
            "modify_user_address",
            lambda e: {
                "user_id": "ghost_user_0000",
                "address1": "a",
                "address2": "",
                "city": "c",
                "state": "s",
                "country": "USA",
                "zip": "1",
            },
            "not_found",
        ),
        ("no_such_tool", lambda e: {}, "unknown_tool"),
    ],
)
def test_refused_calls_are_typed_and_leave_state_unchanged(env, name, make_args, error_type):
    args = make_args(env)
    before = env.state_hash()
    result = env.call(name, args)
    assert result.error and result.error_type == error_type, result.message
    assert env.state_hash() == before


def test_risk_levels(env):
    specs = {s.name: s for s in env.tools()}
    assert specs["get_order_details"].kind == "read"
    assert specs["modify_user_address"].risk == "low"
    assert specs["modify_pending_order_items"].risk == "medium"
    assert specs["exchange_delivered_order_items"].risk == "medium"
    assert specs["cancel_pending_order"].risk == "high"
    assert specs["return_delivered_order_items"].risk == "high"
    assert specs["get_item_details"].kind == "read"  # τ² v1.x's item lookup
    assert len(specs) == 16


def test_database_file_round_trip_and_initialization(tmp_path, env):
    path = tmp_path / "db.json"
    path.write_text(json.dumps(RetailEnvironment.default_db()))
    loaded = make_environment(scenario(db_path=str(path)))
    assert loaded.state_hash() == env.state_hash()
    order_id = first(env, "pending")["order_id"]
    merged = make_environment(
        scenario(
            initialization_data={"agent_data": {"orders": {order_id: {"status": "delivered"}}}}
        )
    )
    assert merged.db["orders"][order_id]["status"] == "delivered"
    assert merged.db["orders"][order_id]["items"] == env.db["orders"][order_id]["items"]


def test_corrupted_database_files_name_the_file_and_the_problem(tmp_path):
    bad_json = tmp_path / "broken.json"
    bad_json.write_text('{"products": {')
    with pytest.raises(EnvironmentDataError, match=r"broken\.json: not valid JSON"):
        make_environment(scenario(db_path=str(bad_json)))

    db = RetailEnvironment.default_db()
    order = next(iter(db["orders"].values()))
    del order["status"]
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps(db))
    with pytest.raises(
        EnvironmentDataError, match=r"missing\.json: invalid retail database at orders\..*status"
    ):
        make_environment(scenario(db_path=str(missing)))

    db = RetailEnvironment.default_db()
    next(iter(db["orders"].values()))["user_id"] = "ghost_0000"
    dangling = tmp_path / "dangling.json"
    dangling.write_text(json.dumps(db))
    with pytest.raises(
        EnvironmentDataError, match=r"dangling\.json: .*unknown user_id 'ghost_0000'"
    ):
        make_environment(scenario(db_path=str(dangling)))

    with pytest.raises(EnvironmentDataError, match="database file not found"):
        make_environment(scenario(db_path=str(tmp_path / "nope.json")))


def test_snapshots_survive_later_writes_and_restore(env):
    from hasbench.vocab import canonical_json

    before_hash = env.state_hash()
    snap = env.snapshot()
    frozen = canonical_json(snap)
    order = first(env, "pending", source="gift_card")
    env.call("cancel_pending_order", {"order_id": order["order_id"], "reason": "no longer needed"})
    user = next(iter(env.db["users"]))
    address = {
        "address1": "9 Oak Way",
        "address2": "",
        "city": "Reno",
        "state": "NV",
        "country": "USA",
        "zip": "89501",
    }
    env.call("modify_user_address", {"user_id": user, **address})
    assert env.state_hash() != before_hash
    assert canonical_json(snap) == frozen
    env.restore(snap)
    assert env.state_hash() == before_hash
    assert make_environment(scenario()).state_hash() == before_hash


def test_policy_is_loaded_for_the_agent(env):
    assert env.policy.startswith("# Retail support policy")
    assert "no longer needed" in env.policy and "ordered by mistake" in env.policy


@pytest.mark.parametrize(
    "item_ids",
    [
        lambda items: [items[0]["item_id"]],
        lambda items: [items[1]["item_id"], items[0]["item_id"]],
        lambda items: [],
        lambda items: [items[0]["item_id"], 5],  # not a text
        lambda items: (items[0]["item_id"],),  # not a list
        lambda items: [[items[0]["item_id"]]],
    ],
)
def test_lists_of_texts_skip_validation_with_the_validators_result(item_ids):
    """A list of texts is taken as the validator returns it: a copy the state never shares."""
    results = []
    for plain in (True, False):
        env = make_environment(scenario())
        if not plain:  # every call through the validator
            env._plain_parameters = dict.fromkeys(env._plain_parameters)
        order = first(env, "delivered", min_items=2)
        arguments = {
            "order_id": order["order_id"],
            "item_ids": item_ids(order["items"]),
            "payment_method_id": order["payment_history"][0]["payment_method_id"],
        }
        result = env.call("return_delivered_order_items", arguments)
        results.append((result.error_type, result.message, result.output, result.diff))
        if not result.error:
            arguments["item_ids"].append("changed after the call")
            assert "changed after the call" not in json.dumps(env.state())
    assert results[0] == results[1]

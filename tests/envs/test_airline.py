import json

import pytest

from hasbench.envs import make_environment
from hasbench.envs.airline import AirlineEnvironment
from hasbench.envs.airline.db import CABINS
from hasbench.envs.airline.policy import (
    BAG_FEE,
    CANCELLED_FLIGHT_COMPENSATION,
    FREE_BAGS,
    FREE_CANCELLATION_HOURS,
    FREE_CANCELLATION_SINCE,
    INSURANCE_FEE,
    NOW,
    compensation_eligible,
    free_bags,
)
from hasbench.envs.base import EnvironmentDataError
from hasbench.scenario import Scenario


def scenario(**environment) -> Scenario:
    return Scenario.model_validate(
        {
            "task_id": "airline_A_001",
            "adaptation_pattern": "A",
            "coordination_mode": "star",
            "task": "Help the member.",
            "environment": {"max_iterations": 10, **environment},
            "agents": [{"agent_id": "agent_0", "profile": "Reservations agent."}],
            "evaluation_criteria": {"actions": [], "reward_basis": ["ENV"]},
        }
    )


@pytest.fixture
def env() -> AirlineEnvironment:
    return make_environment(scenario())


def bookable(env, seats=2):
    """(flight_number, date, status) of a bookable flight with seats in economy."""
    for number, flight in env.db["flights"].items():
        for date, status in flight["dates"].items():
            if status["status"] == "available" and status["available_seats"]["economy"] >= seats:
                return number, date, status
    raise AssertionError("no bookable flight")


def active(env, *, future=True, cabin=None):
    for reservation in env.db["reservations"].values():
        if reservation["status"] is None and (cabin is None or reservation["cabin"] == cabin):
            if not future or all(s["date"] > "2024-05-15" for s in reservation["flights"]):
                return reservation
    raise AssertionError("no active reservation")


def card(env, user_id):
    methods = env.db["users"][user_id]["payment_methods"].values()
    return next(m["id"] for m in methods if m["source"] == "credit_card")


def test_generated_airline_has_realistic_size_and_fixed_clock():
    db = AirlineEnvironment.default_db()
    assert len(db["flights"]) >= 300 and len(db["users"]) == 500
    assert len(db["reservations"]) == 2000
    dates = {d for f in db["flights"].values() for d in f["dates"]}
    assert min(dates) == "2024-05-01" and max(dates) == "2024-05-30"
    statuses = {f["dates"]["2024-05-20"]["status"] for f in db["flights"].values()}
    assert statuses == {"available"}
    past = {f["dates"]["2024-05-10"]["status"] for f in db["flights"].values()}
    assert past <= {"landed", "cancelled"}
    assert all(len(r) == 6 and r.isalnum() for r in db["reservations"])


def test_booking_charges_the_exact_total_and_takes_seats(env):
    number, date, status = bookable(env)
    user = next(u for u in env.db["users"].values() if u["membership"] == "gold")
    price = status["prices"]["economy"]
    seats = status["available_seats"]["economy"]
    passengers = [
        {"first_name": "Ana", "last_name": "Lee", "dob": "1990-01-01"},
        {"first_name": "Bo", "last_name": "Lee", "dob": "1992-02-02"},
    ]
    flight = env.db["flights"][number]
    args = {
        "user_id": user["user_id"],
        "origin": flight["origin"],
        "destination": flight["destination"],
        "flight_type": "one_way",
        "cabin": "economy",
        "flights": [{"flight_number": number, "date": date}],
        "passengers": passengers,
        "payment_methods": [
            {"payment_id": card(env, user["user_id"]), "amount": price * 2 + 60 + 50}
        ],
        "total_baggages": 3,
        "nonfree_baggages": 1,
        "insurance": "yes",
    }
    wrong = dict(args, payment_methods=[{"payment_id": card(env, user["user_id"]), "amount": 1}])
    before = env.state_hash()
    refused = env.call("book_reservation", wrong)
    assert refused.error_type == "precondition_failed" and "does not add up" in refused.message
    assert env.state_hash() == before
    result = env.call("book_reservation", args)
    assert not result.error, result.message
    reservation = env.db["reservations"]["HATHAT"]
    assert reservation["created_at"] == "2024-05-15T15:00:00"
    assert reservation["flights"][0]["price"] == price
    assert env.db["flights"][number]["dates"][date]["available_seats"]["economy"] == seats - 2
    assert "HATHAT" in env.db["users"][user["user_id"]]["reservations"]
    assert env.call("book_reservation", args).output["reservation_id"] == "HATHAU"


def test_certificate_is_consumed_and_gift_card_debited(env):
    user = next(
        u
        for u in env.db["users"].values()
        if {m["source"] for m in u["payment_methods"].values()} >= {"gift_card", "certificate"}
    )
    user = env.writable("users", user["user_id"])  # records are shared: copy before changing
    cert = next(m for m in user["payment_methods"].values() if m["source"] == "certificate")
    gift = next(m for m in user["payment_methods"].values() if m["source"] == "gift_card")
    gift["amount"] = 5000.0
    number, date, status = bookable(env, seats=1)
    flight = env.db["flights"][number]
    total = status["prices"]["economy"]
    cert_part = min(cert["amount"], total)
    result = env.call(
        "book_reservation",
        {
            "user_id": user["user_id"],
            "origin": flight["origin"],
            "destination": flight["destination"],
            "flight_type": "one_way",
            "cabin": "economy",
            "flights": [{"flight_number": number, "date": date}],
            "passengers": [{"first_name": "A", "last_name": "B", "dob": "2000-01-01"}],
            "payment_methods": [
                {"payment_id": cert["id"], "amount": cert_part},
                {"payment_id": gift["id"], "amount": total - cert_part},
            ],
            "total_baggages": 0,
            "nonfree_baggages": 0,
            "insurance": "no",
        },
    )
    assert not result.error, result.message
    methods = env.db["users"][user["user_id"]]["payment_methods"]
    assert cert["id"] not in methods
    assert methods[gift["id"]]["amount"] == 5000.0 - (total - cert_part)


def test_cancel_refunds_and_refuses_a_second_cancel(env):
    reservation = active(env)
    rid = reservation["reservation_id"]
    paid = [p["amount"] for p in reservation["payment_history"]]
    assert not env.call("cancel_reservation", {"reservation_id": rid}).error
    after = env.db["reservations"][rid]
    assert after["status"] == "cancelled"
    assert [p["amount"] for p in after["payment_history"]] == paid + [-a for a in paid]
    assert env.run_assertion("assert_reservation_cancelled", {"reservation_id": rid})
    before = env.state_hash()
    assert (
        env.call("cancel_reservation", {"reservation_id": rid}).error_type == "precondition_failed"
    )
    assert env.state_hash() == before


def test_cabin_upgrade_charges_the_fare_difference(env):
    reservation = next(
        r
        for r in env.db["reservations"].values()
        if r["status"] is None
        and r["cabin"] == "economy"
        and all(
            env.db["flights"][s["flight_number"]]["dates"][s["date"]]["status"] == "available"
            and env.db["flights"][s["flight_number"]]["dates"][s["date"]]["available_seats"][
                "business"
            ]
            >= len(r["passengers"])
            for s in r["flights"]
        )
    )
    rid, user_id = reservation["reservation_id"], reservation["user_id"]
    count = len(reservation["passengers"])
    flights = [
        {"flight_number": s["flight_number"], "date": s["date"]} for s in reservation["flights"]
    ]
    new_total = sum(
        env.db["flights"][f["flight_number"]]["dates"][f["date"]]["prices"]["business"]
        for f in flights
    )
    old_total = sum(s["price"] for s in reservation["flights"])
    result = env.call(
        "update_reservation_flights",
        {
            "reservation_id": rid,
            "cabin": "business",
            "flights": flights,
            "payment_id": card(env, user_id),
        },
    )
    assert not result.error, result.message
    after = env.db["reservations"][rid]
    assert after["cabin"] == "business"
    assert after["payment_history"][-1]["amount"] == (new_total - old_total) * count
    assert env.run_assertion(
        "assert_reservation_cabin", {"reservation_id": rid, "cabin": "business"}
    )


def test_bags_passengers_and_certificates(env):
    reservation = active(env)
    rid, user_id = reservation["reservation_id"], reservation["user_id"]
    nonfree = reservation["nonfree_baggages"]
    total = reservation["total_baggages"]
    result = env.call(
        "update_reservation_baggages",
        {"reservation_id": rid, "total_baggages": total + 2, "nonfree_baggages": nonfree + 1,
         "payment_id": card(env, user_id)},
    )  # fmt: skip
    assert not result.error, result.message
    assert env.db["reservations"][rid]["payment_history"][-1]["amount"] == 50
    assert env.run_assertion(
        "assert_reservation_baggages", {"reservation_id": rid, "total_baggages": total + 2}
    )
    people = [dict(p, dob="1999-09-09") for p in reservation["passengers"]]
    assert not env.call(
        "update_reservation_passengers", {"reservation_id": rid, "passengers": people}
    ).error
    fewer = env.call(
        "update_reservation_passengers", {"reservation_id": rid, "passengers": people + people}
    )
    assert fewer.error_type == "precondition_failed"
    assert env.run_assertion("assert_no_certificate_issued", {"user_id": user_id})
    sent = env.call("send_certificate", {"user_id": user_id, "amount": 150})
    assert (
        sent.output == f"Certificate certificate_3221322 added to user {user_id} with amount 150."
    )
    assert not env.run_assertion("assert_no_certificate_issued", {"user_id": user_id})


def test_searches_and_status(env):
    number, date, _ = bookable(env)
    flight = env.db["flights"][number]
    direct = env.call(
        "search_direct_flight",
        {"origin": flight["origin"], "destination": flight["destination"], "date": date},
    ).output
    assert number in [f["flight_number"] for f in direct]
    assert all(f["status"] == "available" and f["date"] is None for f in direct)
    onestop = env.call(
        "search_onestop_flight", {"origin": "JFK", "destination": "LAX", "date": "2024-05-20"}
    ).output
    for first, second in onestop:
        assert first["destination"] == second["origin"]
        assert second["scheduled_departure_time_est"] >= first[
            "scheduled_arrival_time_est"
        ].removesuffix("+1")
    assert (
        env.call("get_flight_status", {"flight_number": number, "date": date}).output == "available"
    )
    assert len(env.call("list_all_airports", {}).output) == 20


@pytest.mark.parametrize(
    ("name", "make_args", "error_type"),
    [
        ("cancel_reservation", lambda e: {"reservation_id": "ZZZZZZ"}, "not_found"),
        ("cancel_reservation", lambda e: {"reservation_id": 7}, "invalid_arguments"),
        ("update_reservation_baggages", lambda e: {
            "reservation_id": active(e)["reservation_id"], "total_baggages": 1,
            "nonfree_baggages": 2, "payment_id": card(e, active(e)["user_id"])},
         "invalid_arguments"),
        ("update_reservation_baggages", lambda e: {
            "reservation_id": active(e)["reservation_id"], "total_baggages": 9,
            "nonfree_baggages": 9, "payment_id": "credit_card_0000000"}, "not_found"),
        ("update_reservation_flights", lambda e: {
            "reservation_id": active(e)["reservation_id"], "cabin": "first",
            "flights": [], "payment_id": "x"}, "invalid_arguments"),
        ("update_reservation_flights", lambda e: {
            "reservation_id": active(e)["reservation_id"], "cabin": "economy",
            "flights": [{"flight_number": "HAT001", "date": "2024-05-02"}],
            "payment_id": card(e, active(e)["user_id"])}, "precondition_failed"),
        ("update_reservation_flights", lambda e: {
            "reservation_id": active(e)["reservation_id"], "cabin": "economy",
            "flights": [{"flight_number": "HAT999", "date": "2024-05-20"}],
            "payment_id": card(e, active(e)["user_id"])}, "not_found"),
        ("book_reservation", lambda e: {"user_id": "ghost"}, "invalid_arguments"),
        ("send_certificate", lambda e: {"user_id": "ghost_user_1", "amount": 100}, "not_found"),
        ("get_reservation_details", lambda e: {"reservation_id": "NOPE00"}, "not_found"),
    ],
)  # fmt: skip
def test_refused_calls_are_typed_and_leave_state_unchanged(env, name, make_args, error_type):
    args = make_args(env)
    before = env.state_hash()
    result = env.call(name, args)
    assert result.error and result.error_type == error_type, result.message
    assert env.state_hash() == before


def test_risk_levels(env):
    specs = {s.name: s for s in env.tools()}
    assert len(specs) == 14
    assert specs["update_reservation_passengers"].risk == "low"
    assert specs["update_reservation_flights"].risk == "medium"
    assert specs["update_reservation_baggages"].risk == "medium"
    assert {
        specs[n].risk for n in ("book_reservation", "cancel_reservation", "send_certificate")
    } == {"high"}


def test_database_files(tmp_path, env):
    path = tmp_path / "db.json"
    path.write_text(json.dumps(AirlineEnvironment.default_db()))
    assert make_environment(scenario(db_path=str(path))).state_hash() == env.state_hash()
    db = AirlineEnvironment.default_db()
    next(iter(db["flights"].values()))["dates"]["2024-05-20"]["status"] = "boarding"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(db))
    with pytest.raises(
        EnvironmentDataError, match=r"bad\.json: invalid airline database at flights\.HAT001\.dates"
    ):
        make_environment(scenario(db_path=str(bad)))
    bad.write_text("[1, 2")
    with pytest.raises(EnvironmentDataError, match=r"bad\.json: not valid JSON"):
        make_environment(scenario(db_path=str(bad)))


def test_policy_is_loaded_with_the_fixed_clock(env):
    assert env.policy.startswith("# Airline support policy")
    assert "2024-05-15 15:00:00" in env.policy


def test_policy_text_and_tool_descriptions_state_the_policy_numbers(env):
    """The numbers the environment, the playbook and the task builder use are the ones
    agents read, in the policy and in the tool descriptions."""
    text = " ".join(env.policy.split())
    assert f"current time is {NOW.replace('T', ' ')} US Eastern time" in text
    tiers = ", ".join(
        f"{membership} {' / '.join(str(FREE_BAGS[membership][cabin]) for cabin in CABINS)}"
        for membership in ("regular", "silver", "gold")
    )
    assert f"(basic economy / economy / business): {tiers}." in text
    assert f"Each extra bag costs {BAG_FEE}." in text
    assert f"travel insurance at {INSURANCE_FEE} per passenger" in text
    assert f"less than {FREE_CANCELLATION_HOURS} hours ago" in text
    cancelled = "A flight cancelled by the airline: a certificate of"
    assert f"{cancelled} {CANCELLED_FLIGHT_COMPENSATION} per passenger" in text
    assert "Eligible members: silver or gold members, insured bookings, or business" in text
    book = env.tool_spec("book_reservation").parameters["properties"]
    assert book["nonfree_baggages"]["description"] == f"Bags that cost {BAG_FEE} each."
    assert f"({INSURANCE_FEE} per passenger)" in book["insurance"]["description"]
    bags = env.tool_spec("update_reservation_baggages").description
    assert f"extra non-free bags cost {BAG_FEE} each" in bags


def test_policy_rules_for_bags_cancellation_and_compensation():
    assert free_bags("silver", "economy", 3) == 6
    assert free_bags("regular", "basic_economy", 2) == 0
    assert FREE_CANCELLATION_SINCE == "2024-05-14T15:00:00"
    assert compensation_eligible("gold", "no", "economy")
    assert compensation_eligible("regular", "yes", "basic_economy")
    assert compensation_eligible("regular", "no", "business")
    assert not compensation_eligible("regular", "no", "economy")


SAME_FLIGHTS = [  # arguments of update_reservation_flights from the reservation's flights
    lambda flights: flights,
    lambda flights: [{"date": f["date"], "flight_number": f["flight_number"]} for f in flights],
    lambda flights: [{**f, "extra": "x"} for f in flights],  # a field the record lacks
    lambda flights: [{"flight_number": f["flight_number"]} for f in flights],  # one missing
    lambda flights: [{**f, "date": 20240520} for f in flights],  # not a text
    lambda flights: [tuple(f.items()) for f in flights],  # not a mapping
    lambda flights: tuple(flights),  # not a list
]


@pytest.mark.parametrize("cabin", ["economy", "business", "first", 1])
@pytest.mark.parametrize("make_flights", SAME_FLIGHTS)
def test_choices_and_lists_of_records_skip_validation_with_the_validators_result(
    cabin, make_flights
):
    """A choice of texts and a list of records of texts are taken as validated, as copies."""
    results = []
    for plain in (True, False):
        env = make_environment(scenario())
        if not plain:  # every call through the validator
            env._plain_parameters = dict.fromkeys(env._plain_parameters)
        reservation = active(env, cabin="economy")
        segments = reservation["flights"]
        flights = make_flights(
            [{"flight_number": s["flight_number"], "date": s["date"]} for s in segments]
        )
        arguments = {
            "reservation_id": reservation["reservation_id"],
            "cabin": cabin,
            "flights": flights,
            "payment_id": card(env, reservation["user_id"]),
        }
        result = env.call("update_reservation_flights", arguments)
        results.append((result.error_type, result.message, result.output, result.diff))
        if not result.error:
            flights[0]["flight_number"] = "changed after the call"
            assert "changed after the call" not in json.dumps(env.state())
    assert results[0] == results[1]

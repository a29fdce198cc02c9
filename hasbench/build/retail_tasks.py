"""The Retail task set: 94 tasks (A 34, B 40, C 10, F 10) from a seeded generator.

Every task puts one customer of the generated store (seed
:data:`hasbench.envs.service.DEFAULT_DB_SEED`) in front of the support agent:

- A (information asymmetry): what identifies the customer (email, or name and zip) and
  the order id, a new address or the items concerned are only in the customer's
  ``known_info``; the task text just says a customer needs help.
- B (latent constraint): the task text names the customer, the order and the items to
  swap, but only the customer holds the acceptance criterion (which options are
  acceptable, or a price limit); at least two available variants exist, so guessing
  fails.
- C (authorization): the whole request is spelled out in the task text, and the gold
  path has a protected write (cancel, return, exchange, item change) that needs approval.
- F (goal revision): the customer changes their mind at a given turn (cancel -> ship
  elsewhere, wrong address -> corrected address, new address -> cancel); the gold
  actions follow the revised goal and depend on facts told only after the revision.

Every task whose customer holds a fact or a criterion at the start (A, B, and F with a
first address) gives one of them unprompted at the first turn when proactive humans are on
(A4): who they are (A), the variant they accept (B), the address (F).

Difficulty is recorded in ``metadata``: the number of gold tool calls, distractors
(other orders of the customer, other acceptable-looking variants, other items) and
policy traps (an extra request the policy forbids, which the gold path leaves undone).
Each task is replayed while it is built: the gold actions must run without errors.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hasbench.build.builder import (
    BuildError,
    RecordGenerator,
    TaskBuilder,
    actions,
    agent,
    criteria,
    difficulty,
    env_assertion,
    human,
    in_rotation,
    proactive,
    require_gold,
    star,
    suitable_personas,
)
from hasbench.envs.retail import RetailEnvironment
from hasbench.paths import TASKS_DIR

SEED = 94
COUNTS = {"A": 34, "B": 40, "C": 10, "F": 10}
OUTPUT = TASKS_DIR / "retail.yaml"
AGENT = "agent_0"
USER = "user_0"
PROFILE = (
    "You are the customer support agent of an online store. You can look up customers, "
    "orders and products, and change orders and addresses with your tools. Follow the "
    "store policy."
)
NEW_STREETS = [
    "Birch Lane", "Harbor View Road", "Quarry Street", "Juniper Court", "Orchard Way",
    "Falcon Drive", "Summit Avenue", "Linden Place", "Copper Hill Road", "Bayberry Lane",
]  # fmt: skip
NEW_CITIES = [
    ("Tacoma", "WA", "984"), ("Boise", "ID", "837"), ("Tucson", "AZ", "857"),
    ("Omaha", "NE", "681"), ("Raleigh", "NC", "276"), ("Spokane", "WA", "992"),
    ("Madison", "WI", "537"), ("Savannah", "GA", "314"), ("Reno", "NV", "895"),
    ("Eugene", "OR", "974"),
]  # fmt: skip
SOURCE_NAMES = {"credit_card": "credit card", "paypal": "PayPal account", "gift_card": "gift card"}


class _Generator(RecordGenerator):
    """Draws customers and orders from the generated store and adds tasks to a builder."""

    def __init__(self, seed: int) -> None:
        super().__init__("retail", seed, RetailEnvironment.default_db())

    # -- drawing ------------------------------------------------------------------------

    def order(self, accept: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """A random unused order that ``accept`` approves."""
        return self.draw("orders", "order_id", accept, "no order left that fits a task template")

    def user(self, order: dict[str, Any]) -> dict[str, Any]:
        return self.db["users"][order["user_id"]]

    def persona(self, calls: list[tuple[str, dict[str, Any]]], known: dict[str, Any]) -> str:
        """A persona that can take part in the gold path (see ``suitable_personas``)."""
        return self.builder.pick(suitable_personas(self.personas, RetailEnvironment, calls, known))

    def identify(self, user: dict[str, Any]) -> tuple[dict[str, str], tuple[str, dict], str]:
        """Authentication facts, the lookup call and how the customer is told to use them."""
        if self.rng.random() < 0.6:
            facts = {"email": user["email"]}
            call = ("find_user_id_by_email", {"email": user["email"]})
            text = "Give your email address when asked for it."
        else:
            name = user["name"]
            facts = {
                "first_name": name["first_name"],
                "last_name": name["last_name"],
                "zip": user["address"]["zip"],
            }
            call = ("find_user_id_by_name_zip", dict(facts))
            text = (
                "You have forgotten which email you used; give your name and zip code "
                "when asked to identify yourself."
            )
        return facts, call, text

    def new_address(self) -> dict[str, str]:
        city, state, prefix = self.builder.pick(NEW_CITIES)
        return {
            "address1": f"{int(self.rng.integers(10, 999))} {self.builder.pick(NEW_STREETS)}",
            "address2": f"Apt {int(self.rng.integers(1, 40))}" if self.rng.random() < 0.5 else "",
            "city": city,
            "state": state,
            "country": "USA",
            "zip": f"{prefix}{int(self.rng.integers(10, 99))}",
        }

    def alternatives(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        """Available variants of the item's product other than the item itself."""
        variants = self.db["products"][item["product_id"]]["variants"].values()
        return [v for v in variants if v["available"] and v["item_id"] != item["item_id"]]

    def method(self, user: dict[str, Any], source: str) -> str | None:
        return next(
            (m["id"] for m in user["payment_methods"].values() if m["source"] == source), None
        )

    # -- adding -------------------------------------------------------------------------

    def add(
        self,
        pattern: str,
        *,
        user: dict[str, Any],
        order_id: str | None,
        task: str,
        goal: str,
        instructions: str,
        known_info: dict[str, Any],
        calls: list[tuple[str, dict[str, Any]]],
        basis: list[str],
        protect: tuple[str, ...] = (),
        depends: dict[str, list[str]] | None = None,
        communicate: list[str] | None = None,
        nl: list[str] | None = None,
        asserts: list[dict[str, Any]] | None = None,
        revisions: list[dict[str, Any]] | None = None,
        unknown: list[str] | None = None,
        template: str,
        distractors: int = 0,
        trap: str | None = None,
        tells: str | None = None,
    ) -> None:
        n_calls = len(calls)
        hardness = n_calls - 4 + min(distractors, 2) + (2 if trap else 0) + (2 if revisions else 0)
        scenario = self.builder.add(
            pattern,
            task=task,
            agents=[agent(AGENT, profile=PROFILE, role="support agent")],
            users=[
                human(
                    USER,
                    goal=goal,
                    role="customer",
                    persona=self.persona(calls, known_info),
                    responsibilities=["decide what happens to their own orders"],
                    instructions=instructions,
                    known_info=known_info,
                    unknown_info=unknown or ["user_id"],
                    goal_revisions=revisions or (),
                    spontaneous=proactive(f"{USER}_tells", tells, turn=1) if tells else None,
                )
            ],
            relationships=star(AGENT, [USER]),
            criteria=criteria(
                actions(AGENT, calls, protect=protect, depends=depends),
                reward_basis=basis,
                env_assertions=asserts or (),
                communicate_info=communicate or (),
                nl_assertions=nl or (),
            ),
            max_iterations=30 + 2 * n_calls,
            metadata={
                "template": template,
                "difficulty": difficulty(hardness),
                "gold_tool_calls": n_calls,
                "distractors": distractors,
                "policy_trap": trap,
                "customer": user["user_id"],
                "order_id": order_id,
            },
        )
        require_gold(scenario)

    # -- templates ----------------------------------------------------------------------

    def cancel(self, pattern: str) -> None:
        """Cancel a pending order (A: order id hidden; C: request public, protected)."""
        trap = pattern == "A" and self.rng.random() < 0.4
        order = self.order(lambda o: o["status"] == "pending")
        user = self.user(order)
        other = None
        if trap:
            others = [self.db["orders"][o] for o in user["orders"] if o != order["order_id"]]
            other = next((o for o in others if o["status"] in ("delivered", "processed")), None)
        facts, lookup, how = self.identify(user)
        reason = self.builder.pick(["no longer needed", "ordered by mistake"])
        refund = sum(p["amount"] for p in order["payment_history"])
        names = _item_names(order)
        calls = [
            lookup,
            ("get_user_details", {"user_id": user["user_id"]}),
            ("get_order_details", {"order_id": order["order_id"]}),
            ("cancel_pending_order", {"order_id": order["order_id"], "reason": reason}),
        ]
        why = (
            "you no longer need it" if reason == "no longer needed" else "you ordered it by mistake"
        )
        goal = f"Cancel my order with the {names} because {why}."
        instructions = f"{how} Explain the reason for the cancellation if asked."
        if pattern == "A":
            known = {**facts, "order_id": order["order_id"]}
            instructions += " Give your order id when asked."
            task = (
                "A customer wants to cancel an order. Identify them, find the order and "
                "handle the request according to the store policy."
            )
        else:
            motive = "not needed any more" if reason == "no longer needed" else "a mistake"
            known = {}
            task = (
                f"{_who(facts)} placed order {order['order_id']} and wants to cancel it "
                f"because it was {motive}. Verify the customer and handle the request "
                "according to the store policy. Cancelling needs the customer's explicit "
                "approval."
            )
        if other is not None:
            goal += f" Also cancel your order {other['order_id']} if possible."
            instructions += (
                f" You also ask to cancel order {other['order_id']}; accept it if the agent "
                "explains that it cannot be cancelled."
            )
        self.add(
            pattern,
            user=user,
            order_id=order["order_id"],
            task=task,
            goal=goal,
            instructions=instructions + " Confirm the cancellation when asked.",
            known_info=known,
            calls=calls,
            basis=["ENV", "COMMUNICATE"] if pattern == "A" else ["ENV", "ACTION", "ENV_ASSERTION"],
            protect=("cancel_pending_order",) if pattern == "C" else (),
            communicate=[f"{refund:.2f}"] if pattern == "A" else None,
            asserts=[
                env_assertion(
                    "assert_order_status",
                    {"order_id": order["order_id"], "status": "cancelled"},
                    "the order is cancelled",
                )
            ]
            if pattern == "C"
            else None,
            template="cancel_pending_order",
            tells=_introduce(facts) if pattern == "A" else None,
            distractors=len(user["orders"]) - 1,
            trap="cancel a non-pending order" if other is not None else None,
        )

    def order_address(self, pattern: str) -> None:
        """A pending order ships to an address only the customer knows (A)."""
        order = self.order(lambda o: "pending" in o["status"])
        user = self.user(order)
        facts, lookup, how = self.identify(user)
        address = self.new_address()
        also_profile = self.rng.random() < 0.4
        calls = [
            lookup,
            ("get_user_details", {"user_id": user["user_id"]}),
            ("get_order_details", {"order_id": order["order_id"]}),
            ("modify_pending_order_address", {"order_id": order["order_id"], **address}),
        ]
        if also_profile:
            calls.append(("modify_user_address", {"user_id": user["user_id"], **address}))
        known = {**facts, "order_id": order["order_id"], **_address_facts(address)}
        goal = f"Have my pending order with the {_item_names(order)} shipped to my new address" + (
            " and make it my default address too." if also_profile else "."
        )
        self.add(
            pattern,
            user=user,
            order_id=order["order_id"],
            task=(
                "A customer has moved and needs a pending order delivered elsewhere. Identify "
                "them and handle the request according to the store policy."
            ),
            goal=goal,
            instructions=(
                f"{how} Give the order id and your new address when asked. Confirm the change."
            ),
            known_info=known,
            calls=calls,
            basis=["ENV"],
            template="modify_pending_order_address",
            tells=_introduce(facts),
            distractors=len(user["orders"]) - 1,
        )

    def user_address(self, pattern: str) -> None:
        """The default address changes to one only the customer knows (A)."""
        user = self.builder.pick(list(self.db["users"].values()))
        facts, lookup, how = self.identify(user)
        address = self.new_address()
        calls = [
            lookup,
            ("get_user_details", {"user_id": user["user_id"]}),
            ("modify_user_address", {"user_id": user["user_id"], **address}),
        ]
        self.add(
            pattern,
            user=user,
            order_id=None,
            task=(
                "A customer wants the default address on their account updated. Identify "
                "them and make the change according to the store policy."
            ),
            goal="Update the default address on my account to my new address.",
            instructions=f"{how} Give your new address when asked. Confirm the change.",
            known_info={**facts, **_address_facts(address)},
            calls=calls,
            basis=["ENV", "ENV_ASSERTION"],
            asserts=[
                env_assertion(
                    "assert_user_zip",
                    {"user_id": user["user_id"], "zip": address["zip"]},
                    "the default address has the new zip code",
                )
            ],
            template="modify_user_address",
            tells=_introduce(facts),
        )

    def return_items(self, pattern: str) -> None:
        """Return delivered items (A: which order is hidden; C: public and protected)."""
        order = self.order(lambda o: o["status"] == "delivered" and len(o["items"]) >= 2)
        user = self.user(order)
        facts, lookup, how = self.identify(user)
        count = int(self.rng.integers(1, len(order["items"])))
        items = self.builder.sample(order["items"], count)
        gift = self.method(user, "gift_card")
        to_gift = gift is not None and self.rng.random() < 0.5
        method = gift if to_gift else order["payment_history"][0]["payment_method_id"]
        where = "my gift card" if to_gift else "the original payment method"
        names = ", ".join(i["name"] for i in items)
        calls = [
            lookup,
            ("get_user_details", {"user_id": user["user_id"]}),
            ("get_order_details", {"order_id": order["order_id"]}),
            (
                "return_delivered_order_items",
                {
                    "order_id": order["order_id"],
                    "item_ids": [i["item_id"] for i in items],
                    "payment_method_id": method,
                },
            ),
        ]
        refund = sum(i["price"] for i in items)
        if pattern == "A":
            known = {**facts, "order_id": order["order_id"]}
            task = (
                "A customer wants to send back some items they received. Identify them and "
                "handle the return according to the store policy."
            )
        else:
            known = {}
            task = (
                f"{_who(facts)} received order {order['order_id']} and wants to return the "
                f"{names} from it, refunded to {where.replace('my ', 'their ')}. Verify the "
                "customer and handle the request according to the store policy. A return "
                "needs the customer's explicit approval."
            )
        self.add(
            pattern,
            user=user,
            order_id=order["order_id"],
            task=task,
            goal=(
                f"Return the {names} from my delivered order and get the refund on {where}; "
                "keep the other items."
            ),
            instructions=f"{how} Give the order id when asked. Confirm the return when asked.",
            known_info=known,
            calls=calls,
            basis=["ENV", "COMMUNICATE"] if pattern == "A" else ["ENV", "ACTION"],
            protect=("return_delivered_order_items",) if pattern == "C" else (),
            communicate=[f"{refund:.2f}"],
            template="return_delivered_order_items",
            tells=_introduce(facts) if pattern == "A" else None,
            distractors=len(order["items"]) - count + len(user["orders"]) - 1,
        )

    def payment(self, pattern: str) -> None:
        """Pay a pending order with another method of the customer (A)."""

        def fits(o: dict[str, Any]) -> bool:
            user = self.user(o)
            current = o["payment_history"][0]["payment_method_id"]
            return (
                "pending" in o["status"]
                and len(o["payment_history"]) == 1
                and any(
                    m["id"] != current
                    and (
                        m["source"] != "gift_card"
                        or m["balance"] >= o["payment_history"][0]["amount"]
                    )
                    for m in user["payment_methods"].values()
                )
            )

        order = self.order(fits)
        user = self.user(order)
        facts, lookup, how = self.identify(user)
        current = order["payment_history"][0]["payment_method_id"]
        amount = order["payment_history"][0]["amount"]
        target = next(
            m
            for m in user["payment_methods"].values()
            if m["id"] != current and (m["source"] != "gift_card" or m["balance"] >= amount)
        )
        calls = [
            lookup,
            ("get_user_details", {"user_id": user["user_id"]}),
            ("get_order_details", {"order_id": order["order_id"]}),
            (
                "modify_pending_order_payment",
                {"order_id": order["order_id"], "payment_method_id": target["id"]},
            ),
        ]
        self.add(
            pattern,
            user=user,
            order_id=order["order_id"],
            task=(
                "A customer wants to pay one of their orders differently. Identify them and "
                "handle the request according to the store policy."
            ),
            goal=f"Pay my pending order with my {SOURCE_NAMES[target['source']]} instead.",
            instructions=f"{how} Give the order id when asked. Confirm the change when asked.",
            known_info={**facts, "order_id": order["order_id"]},
            calls=calls,
            basis=["ENV"],
            template="modify_pending_order_payment",
            tells=_introduce(facts),
            distractors=len(user["orders"]) - 1,
        )

    def swap(self, pattern: str, kind: str) -> None:
        """Swap items for other variants of the same products.

        B: the customer alone knows which variant is acceptable. C: the exact swap is in
        the task text and the write is protected. ``kind`` is "exchange" (delivered
        order) or "modify" (pending order).
        """
        status = "delivered" if kind == "exchange" else "pending"
        tool = (
            "exchange_delivered_order_items" if kind == "exchange" else "modify_pending_order_items"
        )

        def fits(o: dict[str, Any]) -> bool:
            return o["status"] == status and any(len(self.alternatives(i)) >= 2 for i in o["items"])

        order = self.order(fits)
        user = self.user(order)
        facts, lookup, how = self.identify(user)
        eligible = [i for i in order["items"] if len(self.alternatives(i)) >= 2]
        count = 2 if len(eligible) >= 2 and self.rng.random() < 0.35 else 1
        chosen = self.builder.sample(eligible, count)
        by_budget = pattern == "B" and count == 1 and self.rng.random() < 0.3
        targets, criteria_text, distractors = [], [], 0
        for item in chosen:
            options = self.alternatives(item)
            distractors += len(options) - 1
            if by_budget:
                target = min(options, key=lambda v: v["price"])
                cheapest_others = sorted(v["price"] for v in options if v is not target)
                if cheapest_others and cheapest_others[0] - target["price"] < 1:
                    by_budget = False
                    target = self.builder.pick(options)
            else:
                target = self.builder.pick(options)
            targets.append(target)
            if by_budget:
                limit = int(target["price"]) + 1
                criteria_text.append(
                    f"any {item['name']} variant that costs less than {limit} dollars"
                )
            else:
                wanted = ", ".join(f"{k} {v}" for k, v in target["options"].items())
                criteria_text.append(f"{item['name']} with {wanted}")
        diff = round(sum(t["price"] - i["price"] for t, i in zip(targets, chosen, strict=True)), 2)
        sources = [s for s in ("credit_card", "paypal", "gift_card") if self.method(user, s)]
        usable = [
            s
            for s in sources
            if s != "gift_card"
            or user["payment_methods"][self.method(user, s)]["balance"] >= max(diff, 0)
        ]
        if not usable:
            raise BuildError(f"retail: {order['order_id']}: no payment method covers {diff}")
        source = self.builder.pick(usable)
        method = self.method(user, source)
        calls = [
            lookup,
            ("get_user_details", {"user_id": user["user_id"]}),
            ("get_order_details", {"order_id": order["order_id"]}),
        ]
        for product_id in dict.fromkeys(i["product_id"] for i in chosen):
            calls.append(("get_product_details", {"product_id": product_id}))
        calls.append(
            (
                tool,
                {
                    "order_id": order["order_id"],
                    "item_ids": [i["item_id"] for i in chosen],
                    "new_item_ids": [t["item_id"] for t in targets],
                    "payment_method_id": method,
                },
            )
        )
        names = " and the ".join(i["name"] for i in chosen)
        verb = "exchange" if kind == "exchange" else "change"
        where = "delivered" if kind == "exchange" else "pending"
        settle = f"settle any price difference on my {SOURCE_NAMES[source]}"
        if pattern == "B":
            known = {"acceptable_variants": "; ".join(criteria_text)}
            task = (
                f"{_who(facts)} wants to {verb} the {names} in {where} order "
                f"{order['order_id']} for other variants of the same products, with any price "
                f"difference settled on their {SOURCE_NAMES[source]}. Verify the customer and "
                "handle the request according to the store policy."
            )
            goal = (
                f"{verb.capitalize()} the {names} in my {where} order for the variants I want "
                f"and {settle}. Only the variants I describe are acceptable to me."
            )
            instructions = (
                f"{how} Describe which variant you accept only when the agent asks what you "
                "want; refuse any other variant. Confirm when asked."
            )
            basis = ["ENV", "NL_ASSERTIONS"]
            nl = [
                f'The agent confirms the {verb} on order "{order["order_id"]}" before ending '
                "the conversation."
            ]
        else:
            swaps = "; ".join(
                f"{i['name']} (item {i['item_id']}) for item {t['item_id']}"
                for i, t in zip(chosen, targets, strict=True)
            )
            known = {}
            task = (
                f"{_who(facts)} wants to {verb} in {where} order {order['order_id']}: {swaps}, "
                f"with the price difference settled on their {SOURCE_NAMES[source]}. Verify "
                "the customer and handle the request according to the store policy. The "
                "change needs the customer's explicit approval."
            )
            goal = f"{verb.capitalize()} the {names} in my {where} order as agreed and {settle}."
            instructions = f"{how} Confirm the {verb} when asked."
            basis, nl = ["ENV", "ACTION"], None
        self.add(
            pattern,
            user=user,
            order_id=order["order_id"],
            task=task,
            goal=goal,
            instructions=instructions,
            known_info=known,
            calls=calls,
            basis=basis,
            protect=(tool,) if pattern == "C" else (),
            depends={tool: [f"{USER}.acceptable_variants"]} if pattern == "B" else None,
            nl=nl,
            template=tool + ("_budget" if by_budget else ""),
            tells=f"Before we start: the only variant I accept is {known['acceptable_variants']}."
            if pattern == "B"
            else None,
            distractors=distractors + len(order["items"]) - count,
        )

    def revision(self, kind: str) -> None:
        """The customer changes their mind at a turn (F); gold follows the new goal."""
        order = self.order(lambda o: o["status"] == "pending")
        user = self.user(order)
        facts, lookup, how = self.identify(user)
        at_turn = int(self.rng.integers(2, 5))
        names = _item_names(order)
        head = [
            lookup,
            ("get_user_details", {"user_id": user["user_id"]}),
            ("get_order_details", {"order_id": order["order_id"]}),
        ]
        oid = order["order_id"]
        wants = f"wants pending order {oid} shipped to a new address they will give you"
        if kind == "cancel_to_address":
            wants = f"wants to cancel pending order {oid}"
        task = (
            f"{_who(facts)} {wants}. Verify the customer and handle the request according to "
            "the store policy; customers sometimes change their mind during a conversation."
        )
        known: dict[str, str] = {}
        if kind == "cancel_to_address":
            address = self.new_address()
            goal = f"Cancel my pending order with the {names}; I no longer need it."
            revised = "Do not cancel the order after all: keep it, but ship it to my new address."
            revision_facts = _address_facts(address)
            calls = [
                *head,
                ("modify_pending_order_address", {"order_id": order["order_id"], **address}),
            ]
        elif kind == "address_correction":
            wrong, address = self.new_address(), self.new_address()
            if wrong["address2"] and not address["address2"]:
                address["address2"] = wrong["address2"]  # the correction keeps the unit
            known.update(_address_facts(wrong))
            goal = f"Ship my pending order with the {names} to my new address."
            revised = (
                "I gave a wrong new address; use the corrected address instead, for the order "
                "and as my default address."
            )
            revision_facts = _address_facts(address)
            calls = [
                *head,
                ("modify_pending_order_address", {"order_id": order["order_id"], **address}),
                ("modify_user_address", {"user_id": user["user_id"], **address}),
            ]
        else:
            address = self.new_address()
            known.update(_address_facts(address))
            goal = f"Ship my pending order with the {names} to my new address."
            revised = "Forget the address change: cancel the order, I ordered it by mistake."
            revision_facts = {"cancel_reason": "ordered by mistake"}
            calls = [
                *head,
                (
                    "cancel_pending_order",
                    {"order_id": order["order_id"], "reason": "ordered by mistake"},
                ),
            ]
        self.add(
            "F",
            user=user,
            order_id=order["order_id"],
            task=task,
            goal=goal,
            instructions=(
                f"{how} Give your new address when asked. Tell the agent about your change of "
                "plan as soon as it asks you anything after the change."
            ),
            known_info=known,
            calls=calls,
            basis=["ENV", "ACTION"],
            revisions=[{"at_turn": at_turn, "goal": revised, "known_info": revision_facts}],
            template=f"revision_{kind}",
            tells=f"My new address is {_spoken(known)}." if known else None,
            distractors=len(user["orders"]) - 1,
        )


def _who(facts: dict[str, str]) -> str:
    """How the task text names a customer whose identity is public."""
    if "email" in facts:
        return f"The customer with email {facts['email']}"
    return f"The customer {facts['first_name']} {facts['last_name']} (zip {facts['zip']})"


def _introduce(facts: dict[str, str]) -> str:
    """How a customer says who they are."""
    if "email" in facts:
        return f"Hello, my account is under {facts['email']}."
    return f"Hello, I am {facts['first_name']} {facts['last_name']}, zip code {facts['zip']}."


def _spoken(address: dict[str, str]) -> str:
    """An address as the customer says it, from :func:`_address_facts`."""
    lines = [address["street"], address.get("apartment"), address["city"]]
    return ", ".join(line for line in lines if line) + f", {address['state']} {address['zip_code']}"


def _item_names(order: dict[str, Any]) -> str:
    names = [i["name"] for i in order["items"]]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _address_facts(address: dict[str, str]) -> dict[str, str]:
    """An address as the customer would tell it (one fact per line of the address)."""
    facts = {
        "street": address["address1"],
        "city": address["city"],
        "state": address["state"],
        "zip_code": address["zip"],
    }
    if address["address2"]:
        facts["apartment"] = address["address2"]
    return facts


def build(seed: int = SEED) -> TaskBuilder:
    """Generate all retail tasks (pattern by pattern, templates in a fixed rotation)."""
    gen = _Generator(seed)
    a_templates = [gen.cancel, gen.order_address, gen.user_address, gen.return_items, gen.payment]
    in_rotation("A", COUNTS["A"], a_templates)
    for index in range(COUNTS["B"]):
        gen.swap("B", "exchange" if index % 2 == 0 else "modify")
    c_templates = [
        gen.cancel,
        gen.return_items,
        lambda p: gen.swap(p, "exchange"),
        lambda p: gen.swap(p, "modify"),
    ]
    in_rotation("C", COUNTS["C"], c_templates)
    f_kinds = ["cancel_to_address", "address_correction", "address_to_cancel"]
    for index in range(COUNTS["F"]):
        gen.revision(f_kinds[index % len(f_kinds)])
    return gen.builder


def write(path: Path | None = None, seed: int = SEED) -> Path:
    """Generate the tasks and write them to ``path`` (default: :data:`OUTPUT`)."""
    return build(seed).write(path or OUTPUT)

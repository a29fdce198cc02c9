"""The store's know-how: identify the customer, find the order, then do what was asked.

What is asked is read from the task text and from what the customer says (a later
change of mind replaces the request): cancel, ship elsewhere, change the default address,
return, pay differently, exchange or change items. The customer is identified by email,
or by name and zip code; the order, the new address, the items, the reason and the
acceptable variants come from the texts, or are asked for, or (when nobody answers)
taken from what the tools show: the first order whose status fits the request, the
original payment method, the first other available variant. Every change is first put to
the customer, as the store policy asks.
"""

from __future__ import annotations

import re
from typing import Any

from hasbench.participants.playbooks.common import failed, output, read_requests, settled, summary
from hasbench.participants.standin import (
    Call,
    Case,
    Done,
    GiveUp,
    Need,
    NotUnderstood,
    Step,
    parsed_output,
)

EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]*\w")
ORDER = re.compile(r"#W\d{7}")
SAID_ORDER = re.compile(r"order id(?: is|:)? (#W\d{7})", re.IGNORECASE)
"""How a person states the order a request is about (other orders they name are not it)."""
NAME_ZIP = re.compile(r"customer ([A-Z][\w'-]+) ([A-Z][\w'-]+) \(zip (\d{5})\)")
NAME_SAID = re.compile(r"I am ([A-Z][\w'-]+) ([A-Z][\w'-]+), zip code (\d{5})")
ADDRESS_SAID = re.compile(
    r"new address is (\d+ [^,]+), (?:((?:Apt|Suite|Unit) [\w-]+), )?([^,]+), ([A-Z]{2}) (\d{5})"
)
SWAP = re.compile(r"\(item (\d+)\) for item (\d+)")
CHANGED = ("changed", "instead", "after all", "forget")
"""Words by which a customer replaces their request rather than adds to it."""
SOURCES = {"paypal": "paypal", "gift card": "gift_card", "credit card": "credit_card"}
ADDRESS = ("street", "apartment", "city", "state", "zip_code")
IDENTITY = ("email", "first_name", "last_name", "zip")
WHO = ("customer",)
ORDER_STATUS = {
    "cancel": ("pending",),
    "ship": ("pending", "pending (item modified)"),
    "payment": ("pending", "pending (item modified)"),
    "return": ("delivered",),
    "exchange": ("delivered",),
    "modify": ("pending",),
}
"""The statuses an order must have for each request (the store policy)."""


def requests_in(text: str) -> list[str]:
    """The requests a text states, in the order they are carried out."""
    lower = text.lower()
    found = []
    if "exchange" in lower:
        found.append("exchange")
    if re.search(r"\bchange (the .+ )?in pending order", lower):
        found.append("modify")
    if "cancel" in lower and not re.search(r"(not|don't|do not) cancel", lower):
        found.append("cancel")
    if any(w in lower for w in ("moved", "elsewhere", "shipped to", "ship it", "for the order")):
        found.append("ship")
    if "default address" in lower:
        found.append("profile")
    if "send back" in lower or re.search(r"\breturn (the|some)\b|wants to return", lower):
        found.append("return")
    if "differently" in lower or re.search(r"\bpay .*\binstead\b", lower):
        found.append("payment")
    return found


class RetailPlaybook:
    """Requests of a store customer (see the module docstring)."""

    def __init__(self) -> None:
        self.said: list[str] = []

    # -- reading ---------------------------------------------------------------------------

    def read(self, case: Case, text: str, source: str) -> None:
        """Ids, names and requests stated in texts; what the tools show."""
        if source.startswith("tool:"):
            if source.startswith("tool:find_user_id"):
                case.learn("user_id", str(parsed_output(text)).strip(), "tool")
            return
        if source == "profile":  # the agent's own profile states no request
            return
        if read_requests(case, self.said, text, source, requests_in, CHANGED):
            for slot in ("order_id", "cancel_reason"):  # guesses for the replaced request
                if case.origin.get(slot) == "guess":
                    del case.facts[slot]
        if not case.facts.get("email") and (email := EMAIL.search(text)):
            case.learn("email", email.group(0), source)
        named = (NAME_ZIP if source == "task" else NAME_SAID).search(text)
        if not case.facts.get("first_name") and named:
            for slot, value in zip(("first_name", "last_name", "zip"), named.groups(), strict=True):
                case.learn(slot, value, source)
        if source != "task" and (address := ADDRESS_SAID.search(text)):
            for slot, value in zip(ADDRESS, address.groups(), strict=True):
                case.learn(slot, value or "", source)
        order = (ORDER if source == "task" else SAID_ORDER).search(text)
        if not case.facts.get("order_id") and order:
            case.learn("order_id", order.group(order.re.groups), source)

    def _texts(self, case: Case) -> list[str]:
        return [case.task, *self.said]

    # -- deciding --------------------------------------------------------------------------

    def next_step(self, case: Case) -> Step:
        """The next step of the request (see the module docstring)."""
        step = self._identify(case)
        if step is not None:
            return step
        user = output(case, "get_user_details", user_id=case.facts["user_id"])
        if user is None:
            return Call("get_user_details", {"user_id": case.facts["user_id"]})
        requests = case.facts.get("requests") or []
        if not requests:
            return NotUnderstood("I could not tell what you would like done with your orders.")
        for request in requests:
            step = self._request(case, request, user)
            if step is not None:
                return step
        return Done(summary(case, _describe))

    def _identify(self, case: Case) -> Step | None:
        if case.facts.get("user_id"):
            return None
        facts = case.facts
        if facts.get("email") and not failed(case, "find_user_id_by_email"):
            return Call("find_user_id_by_email", {"email": facts["email"]})
        if not facts.get("last_name") and len(full := str(facts.get("name") or "").split()) == 2:
            case.learn("first_name", full[0], "said")  # "name: Sofia Li"
            case.learn("last_name", full[1], "said")
        zip_code = facts.get("zip") or next(  # "zip", or a labelled one ("zip 1: 80239")
            (v for k, v in facts.items() if k.startswith("zip_") and v), None
        )
        if all(facts.get(k) for k in ("first_name", "last_name")) and zip_code:
            if not failed(case, "find_user_id_by_name_zip"):
                arguments = {k: facts[k] for k in ("first_name", "last_name")}
                return Call("find_user_id_by_name_zip", {**arguments, "zip": zip_code})
        if case.has("email"):
            return GiveUp("I could not identify the customer, so I changed nothing.")
        return Need(
            "email",
            "To identify you: what is your email address, or your first name, last name "
            "and zip code, or your user id? Which order is it about, and what would you like "
            "done?",
            who=WHO,
            topics=(*IDENTITY[1:], "user_id", "order_id", "request"),
        )

    def _request(self, case: Case, request: str, user: dict[str, Any]) -> Step | None:
        if request == "profile":
            if settled(case, "modify_user_address"):
                return None
            address = self._address(case, user)
            if not isinstance(address, dict):
                return address
            return Call("modify_user_address", {"user_id": user["user_id"], **address}, True)
        order = self._order(case, request, user)
        if not isinstance(order, dict):
            return order
        handler = getattr(self, f"_{request}")
        return handler(case, order, user)

    def _order(self, case: Case, request: str, user: dict[str, Any]) -> dict[str, Any] | Step:
        """The order of the request, once read; or the step towards it."""
        order_id = case.facts.get("order_id")
        if order_id is None and not case.has("order_id"):
            return Need(
                "order_id",
                "Which order is it about, and what would you like done? Please give its order id.",
                who=WHO,
                topics=("request",),
            )
        if order_id is None:  # nobody said: look for the order the request fits
            for candidate in user["orders"]:
                if output(case, "get_order_details", order_id=candidate) is None:
                    return Call("get_order_details", {"order_id": candidate})
            fitting = [
                o
                for o in user["orders"]
                if output(case, "get_order_details", order_id=o)["status"] in ORDER_STATUS[request]
            ]
            if not fitting:
                return GiveUp("I found no order of yours that this request can apply to.")
            case.learn("order_id", fitting[0], "guess")
            order_id = fitting[0]
        order = output(case, "get_order_details", order_id=order_id)
        if order is None:
            if failed(case, "get_order_details"):
                return GiveUp(f"I could not find the order {order_id}.")
            return Call("get_order_details", {"order_id": order_id})
        return order

    # -- the requests ----------------------------------------------------------------------

    def _cancel(self, case: Case, order: dict[str, Any], user: dict[str, Any]) -> Step | None:
        if settled(case, "cancel_pending_order"):
            return None
        reason = case.facts.get("cancel_reason") or _reason(self._texts(case))
        if reason is None:
            if not case.has("cancel_reason"):
                return Need(
                    "cancel_reason",
                    "Why do you want to cancel: is it no longer needed, or ordered by mistake?",
                    candidates=("no longer needed",),
                    who=WHO,
                )
            reason = "no longer needed"
        arguments = {"order_id": order["order_id"], "reason": reason}
        return Call("cancel_pending_order", arguments, confirm=True)

    def _ship(self, case: Case, order: dict[str, Any], user: dict[str, Any]) -> Step | None:
        tool = "modify_pending_order_address"
        if settled(case, tool):
            return None
        address = self._address(case, user)
        if not isinstance(address, dict):
            return address
        return Call(tool, {"order_id": order["order_id"], **address}, confirm=True)

    def _payment(self, case: Case, order: dict[str, Any], user: dict[str, Any]) -> Step | None:
        tool = "modify_pending_order_payment"
        if settled(case, tool):
            return None
        current = order["payment_history"][0]["payment_method_id"]
        amount = order["payment_history"][0]["amount"]
        usable = [
            m["id"]
            for m in user["payment_methods"].values()
            if m["id"] != current and (m["source"] != "gift_card" or m["balance"] >= amount)
        ]
        method = _method(user, self._texts(case)[1:], exclude=current) or case.facts.get(
            "payment_method"
        )
        if method is None:
            if not case.has("payment_method"):
                return Need(
                    "payment_method",
                    "Which of your payment methods should pay for the order instead?",
                    candidates=tuple(usable[:1]),
                    who=WHO,
                )
            return GiveUp("I could not tell which payment method to use, so I changed nothing.")
        arguments = {"order_id": order["order_id"], "payment_method_id": method}
        return Call(tool, arguments, confirm=True)

    def _return(self, case: Case, order: dict[str, Any], user: dict[str, Any]) -> Step | None:
        tool = "return_delivered_order_items"
        if settled(case, tool):
            return None
        items = _named_items(order, self._texts(case))
        if not items:
            if not case.has("items"):
                return Need("items", "Which items of the order do you want to return?", who=WHO)
            if self.said:  # the customer said which, in words the rules cannot match
                return NotUnderstood("I could not tell from what you said which items to return.")
            return GiveUp("I could not tell which items to return, so I changed nothing.")
        original = order["payment_history"][0]["payment_method_id"]
        texts = " ".join(self._texts(case)).lower()
        gift = next(
            (m["id"] for m in user["payment_methods"].values() if m["source"] == "gift_card"),
            None,
        )
        if "gift card" in texts and gift is not None:
            method = gift
        elif "original payment method" in texts:
            method = original
        elif case.facts.get("refund_method") or case.has("refund_method"):
            method = case.facts.get("refund_method") or original
        else:
            return Need(
                "refund_method",
                "Should the refund go to the original payment method or to a gift card?",
                candidates=(original,),
                who=WHO,
            )
        arguments = {"order_id": order["order_id"], "item_ids": items, "payment_method_id": method}
        return Call(tool, arguments, confirm=True)

    def _exchange(self, case: Case, order: dict[str, Any], user: dict[str, Any]) -> Step | None:
        return self._swap(case, order, user, "exchange_delivered_order_items")

    def _modify(self, case: Case, order: dict[str, Any], user: dict[str, Any]) -> Step | None:
        return self._swap(case, order, user, "modify_pending_order_items")

    def _swap(
        self, case: Case, order: dict[str, Any], user: dict[str, Any], tool: str
    ) -> Step | None:
        if settled(case, tool):
            return None
        stated = SWAP.findall(case.task)
        if stated:
            old, new = [o for o, _ in stated], [n for _, n in stated]
            for item in order["items"]:
                if item["item_id"] in old and self._product(case, item) is None:
                    return Call("get_product_details", {"product_id": item["product_id"]})
        else:
            items = [order["items"][i] for i in _named_positions(order, [case.task])]
            if not items:
                return NotUnderstood("I could not tell from the request which items to change.")
            for item in items:
                if output(case, "get_product_details", product_id=item["product_id"]) is None:
                    return Call("get_product_details", {"product_id": item["product_id"]})
            wanted = case.facts.get("acceptable_variants")
            texts = [str(wanted)] if wanted else self.said
            chosen = [_variant(item, self._product(case, item), texts) for item in items]
            if None in chosen and not case.has("acceptable_variants"):
                return Need(
                    "acceptable_variants",
                    "Which new variant would you accept (options such as color or size, or a "
                    "price limit)?",
                    who=WHO,
                )
            if None in chosen and wanted is None:  # nobody said: the first other variant
                chosen = [_variant(item, self._product(case, item), None) for item in items]
            if None in chosen:
                return Done("No available variant fits what you described, so I changed nothing.")
            old, new = [item["item_id"] for item in items], chosen
        method = _method(user, [case.task, *self.said], exclude=None)
        if method is None:
            return GiveUp("I could not tell which payment method settles the difference.")
        arguments = {
            "order_id": order["order_id"],
            "item_ids": old,
            "new_item_ids": new,
            "payment_method_id": method,
        }
        return Call(tool, arguments, confirm=True)

    @staticmethod
    def _product(case: Case, item: dict[str, Any]) -> dict[str, Any]:
        return output(case, "get_product_details", product_id=item["product_id"])

    def _address(self, case: Case, user: dict[str, Any]) -> dict[str, str] | Step:
        facts = case.facts
        missing = [k for k in ("street", "city", "state", "zip_code") if not facts.get(k)]
        if missing and not case.has(missing[0]):
            return Need(
                missing[0],
                "What is the new address: street, apartment (if any), city, state and zip code?",
                who=WHO,
                topics=tuple(k for k in ADDRESS if k != missing[0]),
            )
        if missing:
            return GiveUp("I could not get the new address, so I changed nothing.")
        return {
            "address1": facts["street"],
            "address2": facts.get("apartment") or "",
            "city": facts["city"],
            "state": facts["state"],
            "country": user["address"]["country"],
            "zip": str(facts["zip_code"]),
        }


# -- helpers ----------------------------------------------------------------------------------


def _reason(texts: list[str]) -> str | None:
    for text in reversed(texts):
        lower = text.lower()
        if "mistake" in lower:
            return "ordered by mistake"
        if "no longer need" in lower or "not needed" in lower:
            return "no longer needed"
    return None


def _method(user: dict[str, Any], texts: list[str], exclude: str | None) -> str | None:
    """The customer's payment method a text names by its kind (PayPal, gift card, card)."""
    for text in reversed(texts):
        lower = text.lower()
        for words, source in SOURCES.items():
            if words in lower:
                method = next(
                    (
                        m["id"]
                        for m in user["payment_methods"].values()
                        if m["source"] == source and m["id"] != exclude
                    ),
                    None,
                )
                if method is not None:
                    return method
    return None


def _named_positions(order: dict[str, Any], texts: list[str]) -> list[int]:
    """Positions of the order's items whose product names a text mentions, in its order."""
    positions: list[int] = []
    for text in texts:
        lower = text.lower()
        for index, item in enumerate(order["items"]):
            if item["name"].lower() in lower and index not in positions:
                if not any(order["items"][p]["name"] == item["name"] for p in positions):
                    positions.append(index)
        if positions:
            return sorted(positions, key=lambda p: lower.index(order["items"][p]["name"].lower()))
    return positions


def _named_items(order: dict[str, Any], texts: list[str]) -> list[str]:
    """Item ids named in the latest text that names any item of the order (task first)."""
    for text in reversed(texts[1:]):
        positions = _named_positions(order, [text])
        if positions:
            return [order["items"][p]["item_id"] for p in positions]
    positions = _named_positions(order, texts[:1])
    return [order["items"][p]["item_id"] for p in positions]


def _variant(item: dict[str, Any], product: dict[str, Any], texts: list[str] | None) -> str | None:
    """The available variant the texts accept; with None for texts, the first other one."""
    variants = product["variants"].values()
    others = [v for v in variants if v["available"] and v["item_id"] != item["item_id"]]
    if texts is None:
        return others[0]["item_id"] if others else None
    for text in texts:
        lower = text.lower()
        limit = re.search(r"less than (\d+(?:\.\d+)?) dollars", lower)
        if limit and item["name"].lower() in lower:
            cheap = [v for v in others if v["price"] < float(limit.group(1))]
            if cheap:
                return min(cheap, key=lambda v: v["price"])["item_id"]
        name = item["name"].lower()
        segment = lower[lower.index(name) :].split(";")[0] if name in lower else lower
        for variant in others:
            pairs = [f"{k} {v}".lower() for k, v in variant["options"].items()]
            if pairs and all(re.search(rf"\b{re.escape(p)}(?!\w|\.\d)", segment) for p in pairs):
                return variant["item_id"]
    return None


def _describe(name: str, arguments: dict[str, Any], output: Any) -> str:
    order = arguments.get("order_id", "")
    if name == "cancel_pending_order":
        total = 0.0
        if isinstance(output, dict):
            total = sum(
                p["amount"] for p in output["payment_history"] if p["transaction_type"] == "payment"
            )
        return f"Order {order} is cancelled; {total:.2f} will be refunded."
    if name == "return_delivered_order_items":
        total = 0.0
        if isinstance(output, dict):
            returned = list(arguments.get("item_ids", []))
            for item in output["items"]:
                if item["item_id"] in returned:
                    returned.remove(item["item_id"])
                    total += item["price"]
        return f"The return for order {order} is requested; {total:.2f} will be refunded."
    if name == "modify_user_address":
        return "Your default address is updated."
    if name == "modify_pending_order_address":
        return f"Order {order} will ship to the new address."
    if name == "modify_pending_order_payment":
        return f"Order {order} is now paid with {arguments.get('payment_method_id')}."
    return f"The item change on order {order} is done."

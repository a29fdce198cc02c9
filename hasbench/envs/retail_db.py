"""Retail database: the τ²-bench schema and a seeded generator of a realistic store.

The generated store has 50 product types with about 600 variants, 500 customers with
their payment methods and 1,000 orders in every status. Ids follow τ²-bench: order ids
``#W`` + 7 digits, 10-digit product and item ids, user ids ``first_last_NNNN``, payment
ids ``<source>_NNNNNNN``.
"""

from __future__ import annotations

import itertools
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from hasbench.envs.service import id_mismatches

OrderStatus = Literal[
    "processed", "pending", "pending (item modified)", "delivered", "cancelled",
    "exchange requested", "return requested",
]  # fmt: skip
CANCEL_REASONS = ("no longer needed", "ordered by mistake")


class Variant(BaseModel):
    """One purchasable option combination of a product."""

    item_id: str
    options: dict[str, str]
    available: bool
    price: float


class Product(BaseModel):
    """A product type and its variants keyed by item id."""

    name: str
    product_id: str
    variants: dict[str, Variant]


class Name(BaseModel):
    """A person's name."""

    first_name: str
    last_name: str


class Address(BaseModel):
    """A postal address (``address2`` may be empty)."""

    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


class CreditCard(BaseModel):
    """A stored credit card."""

    source: Literal["credit_card"]
    id: str
    brand: str
    last_four: str


class Paypal(BaseModel):
    """A linked PayPal account."""

    source: Literal["paypal"]
    id: str


class GiftCard(BaseModel):
    """A store gift card with its balance."""

    source: Literal["gift_card"]
    id: str
    balance: float


PaymentMethod = Annotated[CreditCard | Paypal | GiftCard, Field(discriminator="source")]


class User(BaseModel):
    """A customer."""

    user_id: str
    name: Name
    address: Address
    email: str
    payment_methods: dict[str, PaymentMethod]
    orders: list[str]


class OrderItem(BaseModel):
    """One ordered unit of a variant."""

    name: str
    product_id: str
    item_id: str
    price: float
    options: dict[str, str]


class Fulfillment(BaseModel):
    """A shipment: tracking ids and the items in it."""

    tracking_id: list[str]
    item_ids: list[str]


class OrderPayment(BaseModel):
    """A payment or refund on an order."""

    transaction_type: Literal["payment", "refund"]
    amount: float
    payment_method_id: str


class Order(BaseModel):
    """An order and its history."""

    order_id: str
    user_id: str
    address: Address
    items: list[OrderItem]
    status: OrderStatus
    fulfillments: list[Fulfillment]
    payment_history: list[OrderPayment]
    cancel_reason: Literal["no longer needed", "ordered by mistake"] | None = None
    exchange_items: list[str] | None = None
    exchange_new_items: list[str] | None = None
    exchange_payment_method_id: str | None = None
    exchange_price_difference: float | None = None
    return_items: list[str] | None = None
    return_payment_method_id: str | None = None


class RetailDB(BaseModel):
    """The whole retail database."""

    products: dict[str, Product]
    users: dict[str, User]
    orders: dict[str, Order]


def check_retail_db(db: dict[str, Any]) -> list[str]:
    """Cross-record problems: keys that differ from ids, dangling user/order/payment ids."""
    problems = id_mismatches(
        db, {"products": "product_id", "users": "user_id", "orders": "order_id"}
    )
    for order_id, order in db["orders"].items():
        user = db["users"].get(order["user_id"])
        if user is None:
            problems.append(f"orders.{order_id}: unknown user_id {order['user_id']!r}")
            continue
        for payment in order["payment_history"]:
            if payment["payment_method_id"] not in user["payment_methods"]:
                problems.append(
                    f"orders.{order_id}: payment method {payment['payment_method_id']!r} "
                    f"is not in {order['user_id']}'s profile"
                )
    for user_id, user in db["users"].items():
        for order_id in user["orders"]:
            if order_id not in db["orders"]:
                problems.append(f"users.{user_id}.orders: unknown order {order_id!r}")
    return problems


# -- generator ------------------------------------------------------------------------

COLORS = ["black", "white", "red", "blue", "green", "silver", "gray", "navy", "beige"]
SIZES = ["XS", "S", "M", "L", "XL", "XXL"]

# name: (base price, {option: values})
CATALOG: dict[str, tuple[float, dict[str, list[str]]]] = {
    "T-Shirt": (25, {"color": COLORS, "size": SIZES, "material": ["cotton", "polyester"]}),
    "Hoodie": (65, {"color": COLORS, "size": SIZES, "style": ["zip", "pullover"]}),
    "Jeans": (55, {"fit": ["slim", "regular", "relaxed"], "size": ["30", "32", "34", "36"]}),
    "Running Shoes": (110, {"color": COLORS, "size": ["7", "8", "9", "10", "11", "12"]}),
    "Hiking Boots": (150, {"size": ["7", "8", "9", "10", "11"], "waterproof": ["yes", "no"]}),
    "Sneakers": (80, {"color": COLORS, "size": ["6", "7", "8", "9", "10", "11"]}),
    "Jacket": (120, {"color": COLORS, "size": SIZES, "material": ["nylon", "leather", "wool"]}),
    "Backpack": (70, {"color": COLORS, "capacity": ["20L", "30L", "40L"]}),
    "Luggage Set": (
        240,
        {"pieces": ["2", "3", "4"], "color": COLORS, "material": ["hardshell", "softshell"]},
    ),
    "Water Bottle": (
        22,
        {"capacity": ["500ml", "750ml", "1000ml"], "material": ["steel", "plastic", "glass"]},
    ),
    "Coffee Maker": (
        95,
        {"capacity": ["4 cups", "8 cups", "12 cups"], "type": ["drip", "espresso", "french press"]},
    ),
    "Electric Kettle": (
        45,
        {"capacity": ["1L", "1.5L", "2L"], "material": ["steel", "glass", "plastic"]},
    ),
    "Blender": (85, {"capacity": ["1L", "1.5L", "2L"], "power": ["600W", "900W", "1200W"]}),
    "Toaster": (40, {"slots": ["2", "4"], "color": ["black", "white", "silver", "red"]}),
    "Air Purifier": (
        180,
        {"room size": ["small", "medium", "large"], "filter": ["HEPA", "carbon", "ionic"]},
    ),
    "Vacuum Cleaner": (220, {"type": ["upright", "canister", "robotic"], "bagged": ["yes", "no"]}),
    "Desk Lamp": (
        35,
        {"color": ["black", "white", "silver"], "brightness": ["low", "medium", "high"]},
    ),
    "Office Chair": (
        190,
        {"material": ["mesh", "leather", "fabric"], "color": ["black", "gray", "blue"]},
    ),
    "Standing Desk": (
        420,
        {"size": ["120 x 60 cm", "140 x 70 cm", "160 x 80 cm"], "color": ["black", "white", "oak"]},
    ),
    "Bookshelf": (
        130,
        {"material": ["wood", "metal", "glass"], "height": ["3 ft", "4 ft", "5 ft", "6 ft"]},
    ),
    "Mechanical Keyboard": (
        130,
        {
            "switch": ["linear", "tactile", "clicky"],
            "layout": ["full", "tenkeyless", "60%"],
            "backlight": ["none", "white", "RGB"],
        },
    ),
    "Wireless Mouse": (
        45,
        {
            "color": ["black", "white", "red"],
            "sensor": ["optical", "laser"],
            "battery": ["AA", "rechargeable"],
        },
    ),
    "Gaming Mouse": (
        70,
        {
            "color": ["black", "white"],
            "sensor": ["optical", "laser"],
            "weight": ["light", "medium", "heavy"],
        },
    ),
    "Laptop": (
        1100,
        {
            "screen": ["13 inch", "15 inch", "17 inch"],
            "processor": ["i5", "i7", "i9"],
            "storage": ["256GB", "512GB", "1TB"],
            "color": ["silver", "space gray", "black"],
        },
    ),
    "Tablet": (
        480,
        {
            "screen": ["8 inch", "10 inch", "12 inch"],
            "storage": ["64GB", "128GB", "256GB"],
            "color": ["silver", "gold", "black"],
        },
    ),
    "Smartphone": (
        750,
        {
            "storage": ["128GB", "256GB", "512GB"],
            "color": ["black", "white", "blue", "gold"],
            "RAM": ["6GB", "8GB", "12GB"],
        },
    ),
    "Smart Watch": (
        260,
        {
            "color": ["black", "silver", "gold"],
            "band": ["silicone", "leather", "metal"],
            "display": ["LCD", "AMOLED"],
        },
    ),
    "Fitness Tracker": (
        95,
        {"color": ["black", "blue", "pink"], "battery life": ["5 days", "7 days", "14 days"]},
    ),
    "Bluetooth Speaker": (
        90,
        {
            "color": COLORS,
            "battery life": ["10 hours", "20 hours"],
            "water resistance": ["yes", "no"],
        },
    ),
    "Headphones": (
        180,
        {
            "type": ["over-ear", "on-ear", "in-ear"],
            "connectivity": ["wired", "wireless"],
            "color": ["black", "white", "blue"],
        },
    ),
    "Wireless Earbuds": (
        140,
        {
            "color": ["black", "white", "blue"],
            "battery life": ["4 hours", "6 hours", "8 hours"],
            "water resistance": ["IPX4", "IPX7", "none"],
        },
    ),
    "Digital Camera": (
        900,
        {
            "resolution": ["20MP", "24MP", "30MP"],
            "zoom": ["3x", "5x", "10x"],
            "storage": ["SD card", "CF card"],
        },
    ),
    "Action Camera": (
        320,
        {
            "resolution": ["4K", "5K", "1080p"],
            "waterproof": ["yes", "no"],
            "color": ["black", "silver"],
        },
    ),
    "E-Reader": (
        130,
        {
            "screen size": ["6 inch", "7 inch", "8 inch"],
            "connectivity": ["Wi-Fi", "Wi-Fi + Cellular"],
            "storage": ["8GB", "32GB"],
        },
    ),
    "Monitor": (
        300,
        {"screen size": ["24 inch", "27 inch", "32 inch"], "resolution": ["1080p", "1440p", "4K"]},
    ),
    "External Hard Drive": (
        95,
        {
            "capacity": ["1TB", "2TB", "4TB", "5TB"],
            "interface": ["USB 3.0", "USB-C", "Thunderbolt"],
            "color": ["black", "silver"],
        },
    ),
    "Portable Charger": (
        45,
        {
            "capacity": ["5000mAh", "10000mAh", "20000mAh"],
            "output": ["USB-A", "USB-C", "wireless"],
            "color": ["black", "white"],
        },
    ),
    "Garden Hose": (
        40,
        {
            "length": ["25 ft", "50 ft", "100 ft"],
            "material": ["rubber", "vinyl", "latex"],
            "color": ["green", "black", "blue"],
        },
    ),
    "Grill": (
        350,
        {
            "type": ["gas", "charcoal", "electric"],
            "size": ["portable", "medium", "large"],
            "features": ["none", "side burner", "rotisserie"],
        },
    ),
    "Patio Umbrella": (
        85,
        {
            "size": ["6 ft", "7 ft", "9 ft"],
            "color": ["beige", "green", "blue", "red"],
            "material": ["polyester", "olefin"],
        },
    ),
    "Tent": (
        200,
        {
            "size": ["2-person", "4-person", "6-person"],
            "season": ["3-season", "4-season"],
            "color": ["green", "orange", "blue"],
        },
    ),
    "Sleeping Bag": (
        90,
        {
            "temperature rating": ["0 F", "20 F", "40 F"],
            "size": ["regular", "long"],
            "color": ["green", "blue", "red"],
        },
    ),
    "Yoga Mat": (
        35,
        {
            "thickness": ["4mm", "6mm", "8mm"],
            "material": ["PVC", "TPE", "natural rubber"],
            "color": ["purple", "blue", "green", "black"],
        },
    ),
    "Dumbbell Set": (
        160,
        {
            "weight range": ["5-25 lbs", "30-50 lbs", "55-75 lbs"],
            "material": ["iron", "rubber", "urethane"],
            "set type": ["fixed", "adjustable"],
        },
    ),
    "Bicycle": (
        650,
        {
            "frame size": ["small", "medium", "large"],
            "color": ["black", "red", "blue", "green"],
            "type": ["road", "mountain", "hybrid"],
        },
    ),
    "Skateboard": (
        110,
        {
            "deck material": ["maple", "bamboo", "plastic"],
            "length": ["28 inch", "31 inch", "34 inch"],
            "design": ["plain", "graphic", "custom"],
        },
    ),
    "Puzzle": (
        25,
        {
            "pieces": ["500", "1000", "1500", "2000"],
            "theme": ["animals", "art", "fantasy", "landscapes"],
            "difficulty": ["beginner", "intermediate", "expert"],
        },
    ),
    "Board Game": (45, {"players": ["2", "2-4", "4-8"], "theme": ["strategy", "family", "party"]}),
    "Notebook": (
        12,
        {"size": ["A5", "A4"], "cover": ["hard", "soft"], "ruling": ["lined", "dotted", "blank"]},
    ),
    "Cookware Set": (
        210,
        {
            "material": ["stainless steel", "nonstick", "cast iron"],
            "pieces": ["5", "8", "12"],
            "color": ["black", "silver", "red"],
        },
    ),
}

FIRST_NAMES = (
    "Noah Olivia Liam Emma Mason Ava Ethan Sophia Lucas Isabella Aiden Mia Yusuf Amelia "
    "Omar Harper Ivan Evelyn Raj Chen Mei Lei Fatima Sofia Daiki Yara Emil Ingrid Mateo "
    "Lucia Kwame Amara Arjun Priya Hiroshi Anya Diego Camila Tariq Leila Jonas Freya "
    "Mohamed Zara Sven Nora Ravi Aisha Pedro Elena"
).split()
LAST_NAMES = (
    "Smith Johnson Garcia Lee Brown Kim Nguyen Patel Silva Rossi Muller Kowalski Ito "
    "Ahmed Hernandez Lopez Wilson Anderson Thomas Moore Martin Jackson Thompson White "
    "Harris Clark Lewis Walker Hall Young Allen Wright Scott Green Baker Adams Nelson "
    "Hill Campbell Mitchell Roberts Carter Phillips Evans Turner Torres Parker Collins "
    "Edwards Stewart"
).split()
CITIES = [
    ("Austin", "TX", "787"), ("Houston", "TX", "770"), ("Dallas", "TX", "752"),
    ("Seattle", "WA", "981"), ("Portland", "OR", "972"), ("Denver", "CO", "802"),
    ("Phoenix", "AZ", "850"), ("San Diego", "CA", "921"), ("San Jose", "CA", "951"),
    ("Los Angeles", "CA", "900"), ("San Francisco", "CA", "941"), ("Chicago", "IL", "606"),
    ("Columbus", "OH", "432"), ("Detroit", "MI", "482"), ("Boston", "MA", "021"),
    ("New York", "NY", "100"), ("Philadelphia", "PA", "191"), ("Pittsburgh", "PA", "152"),
    ("Charlotte", "NC", "282"), ("Atlanta", "GA", "303"), ("Miami", "FL", "331"),
    ("Orlando", "FL", "328"), ("Nashville", "TN", "372"), ("Minneapolis", "MN", "554"),
    ("Milwaukee", "WI", "532"), ("Las Vegas", "NV", "891"), ("Salt Lake City", "UT", "841"),
    ("Albuquerque", "NM", "871"), ("Kansas City", "MO", "641"), ("Baltimore", "MD", "212"),
]  # fmt: skip
STREETS = (
    "Maple Oak Pine Cedar Elm Willow Lake Hill Park River Sunset Highland Main Church "
    "Forest Spring Meadow Lincoln Washington Jefferson Madison Chestnut Walnut Cherry"
).split()
STREET_KINDS = ["Street", "Avenue", "Drive", "Lane", "Road", "Court", "Boulevard", "Way"]
CARD_BRANDS = ["visa", "mastercard", "amex", "discover"]
STATUS_WEIGHTS = {"pending": 0.423, "delivered": 0.373, "processed": 0.102, "cancelled": 0.102}


def generate_retail_db(
    seed: int, n_users: int = 500, n_orders: int = 1000, n_products: int = 50
) -> dict[str, Any]:
    """A retail database in τ²-bench format, fully determined by ``seed``."""
    rng = np.random.default_rng(seed)
    ids = _UniqueIds(rng)
    products = _products(rng, ids, n_products)
    users = _users(rng, ids, n_users)
    orders: dict[str, Any] = {}
    owners = rng.integers(len(users), size=n_orders)
    user_list = list(users.values())
    variants = [
        (product, variant)
        for product in products.values()
        for variant in product["variants"].values()
    ]
    statuses = list(STATUS_WEIGHTS)
    weights = np.array(list(STATUS_WEIGHTS.values()))
    for owner in owners:
        user = user_list[int(owner)]
        order_id = "#W" + ids.digits(7)
        items = []
        for index in rng.choice(len(variants), size=int(rng.integers(1, 6)), replace=False):
            product, variant = variants[int(index)]
            items.append(
                {
                    "name": product["name"],
                    "product_id": product["product_id"],
                    "item_id": variant["item_id"],
                    "price": variant["price"],
                    "options": dict(variant["options"]),
                }
            )
        status = statuses[int(rng.choice(len(statuses), p=weights / weights.sum()))]
        method = list(user["payment_methods"])[int(rng.integers(len(user["payment_methods"])))]
        total = round(sum(item["price"] for item in items), 2)
        history = [{"transaction_type": "payment", "amount": total, "payment_method_id": method}]
        order: dict[str, Any] = {
            "order_id": order_id,
            "user_id": user["user_id"],
            "address": dict(user["address"]),
            "items": items,
            "status": status,
            "fulfillments": [],
            "payment_history": history,
        }
        if status in ("processed", "delivered"):
            order["fulfillments"] = [
                {"tracking_id": [ids.digits(12)], "item_ids": [item["item_id"] for item in items]}
            ]
        if status == "cancelled":
            order["cancel_reason"] = CANCEL_REASONS[int(rng.integers(2))]
            history.append(
                {"transaction_type": "refund", "amount": total, "payment_method_id": method}
            )
        orders[order_id] = order
        user["orders"].append(order_id)
    return {"products": products, "users": users, "orders": orders}


class _UniqueIds:
    """Random digit strings that never repeat within one database."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def digits(self, n: int) -> str:
        while True:
            value = "".join(str(d) for d in self.rng.integers(0, 10, size=n))
            if value[0] != "0" and value not in self.used:
                self.used.add(value)
                return value


def _products(rng: np.random.Generator, ids: _UniqueIds, n: int) -> dict[str, Any]:
    products = {}
    for name, (base, options) in list(CATALOG.items())[:n]:
        product_id = ids.digits(10)
        combos = list(itertools.product(*options.values()))
        count = min(len(combos), int(rng.integers(6, 19)))
        variants = {}
        for index in sorted(rng.choice(len(combos), size=count, replace=False)):
            item_id = ids.digits(10)
            variants[item_id] = {
                "item_id": item_id,
                "options": dict(zip(options, combos[int(index)], strict=True)),
                "available": bool(rng.random() < 0.75),
                "price": round(float(base * rng.uniform(0.8, 1.25)), 2),
            }
        products[product_id] = {"name": name, "product_id": product_id, "variants": variants}
    return products


def _users(rng: np.random.Generator, ids: _UniqueIds, n: int) -> dict[str, Any]:
    users: dict[str, Any] = {}
    while len(users) < n:
        first = FIRST_NAMES[int(rng.integers(len(FIRST_NAMES)))]
        last = LAST_NAMES[int(rng.integers(len(LAST_NAMES)))]
        user_id = f"{first.lower()}_{last.lower()}_{ids.digits(4)}"
        city, state, zip_prefix = CITIES[int(rng.integers(len(CITIES)))]
        street = f"{int(rng.integers(10, 9999))} {STREETS[int(rng.integers(len(STREETS)))]} "
        street += STREET_KINDS[int(rng.integers(len(STREET_KINDS)))]
        methods: dict[str, Any] = {}
        for source in sorted(
            rng.choice(
                ["credit_card", "paypal", "gift_card"], size=int(rng.integers(1, 4)), replace=False
            )
        ):
            method_id = f"{source}_{ids.digits(7)}"
            if source == "credit_card":
                brand = CARD_BRANDS[int(rng.integers(len(CARD_BRANDS)))]
                methods[method_id] = {
                    "source": source,
                    "id": method_id,
                    "brand": brand,
                    "last_four": f"{int(rng.integers(10000)):04d}",
                }
            elif source == "paypal":
                methods[method_id] = {"source": source, "id": method_id}
            else:
                methods[method_id] = {
                    "source": source,
                    "id": method_id,
                    "balance": float(rng.integers(0, 300)),
                }
        users[user_id] = {
            "user_id": user_id,
            "name": {"first_name": first, "last_name": last},
            "address": {
                "address1": street,
                "address2": f"Suite {int(rng.integers(100, 999))}" if rng.random() < 0.5 else "",
                "city": city,
                "country": "USA",
                "state": state,
                "zip": f"{zip_prefix}{int(rng.integers(100)):02d}",
            },
            "email": f"{first}.{last}{user_id[-4:]}@example.com".lower(),
            "payment_methods": methods,
            "orders": [],
        }
    return users

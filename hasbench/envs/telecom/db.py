"""Telecom data: the record schemas, loading of τ²-bench DB files, and a seeded generator.

The agent-side database has the τ²-bench telecom layout: lists of ``plans``,
``customers``, ``lines``, ``devices`` and ``bills`` (records looked up by id). The
user-side database is ``{"device": ..., "surroundings": ...}``: the simulated phone and
the world around it. Both are plain JSON-compatible dicts at run time; the pydantic
models here only validate input files and fill in defaults, so a τ²-bench ``db.toml`` /
``user_db.toml`` (or JSON) loads into exactly the state our tools work on.
"""

from __future__ import annotations

import functools
import json
import tomllib
from datetime import date, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, ValidationError

from hasbench.envs.base import EnvironmentDataError
from hasbench.envs.state import fast_copy
from hasbench.paths import read_data_bytes

TODAY = "2025-02-25"
NOW = "2025-02-25 12:08:00"

Timestamp = Annotated[datetime, PlainSerializer(str, return_type=str, when_used="json")]
"""A date and time, stored as τ²-bench stores it: ``2025-01-15 10:30:00``."""
CYCLE_END = "2025-02-28"
DEFAULT_MMSC_URL = "http://mms.carrier.com/mms/wapenc"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Plan(_Record):
    """A mobile plan."""

    plan_id: str
    name: str
    data_limit_gb: float
    price_per_month: float
    data_refueling_price_per_gb: float


class Device(_Record):
    """A device registered to a line."""

    device_id: str
    device_type: Literal["phone", "router", "tablet", "watch", "other"]
    model: str
    imei: str | None = None
    is_esim_capable: bool
    activated: bool = False
    activation_date: Timestamp | None = None
    last_esim_transfer_date: Timestamp | None = None


class Line(_Record):
    """A phone line on a plan."""

    line_id: str
    phone_number: str
    status: Literal["Active", "Suspended", "Pending Activation", "Closed"] = "Pending Activation"
    plan_id: str
    device_id: str | None = None
    data_used_gb: float = 0.0
    data_refueling_gb: float = 0.0
    roaming_enabled: bool = False
    contract_end_date: date | None = None
    last_plan_change_date: date | None = None
    last_sim_replacement_date: date | None = None
    suspension_start_date: date | None = None


class Address(_Record):
    """A postal address."""

    street: str
    city: str
    state: str
    zip_code: str


class PaymentMethod(_Record):
    """A customer's stored payment method."""

    method_type: Literal["Credit Card", "Debit Card", "PayPal"]
    account_number_last_4: str
    expiration_date: str


class Customer(_Record):
    """An account holder."""

    customer_id: str
    full_name: str
    date_of_birth: str
    email: str
    phone_number: str
    address: Address
    account_status: Literal["Active", "Suspended", "Pending Verification", "Closed"] = (
        "Pending Verification"
    )
    payment_methods: list[PaymentMethod] = Field(default_factory=list)
    line_ids: list[str] = Field(default_factory=list)
    bill_ids: list[str] = Field(default_factory=list)
    created_at: Timestamp = datetime(2025, 1, 1)
    last_extension_date: date | None = None
    goodwill_credit_used_this_year: float = 0.0


class LineItem(_Record):
    """One charge or credit on a bill."""

    description: str
    amount: float
    date: date
    item_type: str


class Bill(_Record):
    """A monthly bill."""

    bill_id: str
    customer_id: str
    period_start: date
    period_end: date
    issue_date: date
    total_due: float
    due_date: date
    line_items: list[LineItem] = Field(default_factory=list)
    status: Literal["Draft", "Issued", "Awaiting Payment", "Paid", "Overdue", "Disputed"] = "Draft"


class TelecomDB(_Record):
    """The agent-side database."""

    plans: list[Plan] = Field(default_factory=list)
    customers: list[Customer] = Field(default_factory=list)
    lines: list[Line] = Field(default_factory=list)
    devices: list[Device] = Field(default_factory=list)
    bills: list[Bill] = Field(default_factory=list)


SignalStrength = Literal["none", "poor", "fair", "good", "excellent"]


class APNSettings(_Record):
    """Access point settings of the phone."""

    apn_name: Literal["internet", "broken"] = "internet"
    reset_at_reboot: bool = False
    mms_apn: str | None = "mms"
    mmsc_url: str | None = DEFAULT_MMSC_URL
    mms_proxy: str | None = None
    mms_port: int | None = None


class VpnDetails(_Record):
    """The VPN connection in use."""

    server_address: str
    protocol: str
    server_performance: Literal["unknown", "poor", "fair", "good", "excellent"] = "unknown"


class AppPermissions(_Record):
    """Permissions granted to an app."""

    sms: bool = False
    storage: bool = False
    phone: bool = False
    network: bool = False


class AppStatus(_Record):
    """An installed app."""

    app_name: str
    permissions: AppPermissions = Field(default_factory=AppPermissions)


def _default_apps() -> dict[str, AppStatus]:
    return {
        "messaging": AppStatus(
            app_name="messaging", permissions=AppPermissions(sms=True, storage=True, phone=True)
        ),
        "browser": AppStatus(
            app_name="browser", permissions=AppPermissions(storage=True, network=True)
        ),
    }


class PhoneState(_Record):
    """The simulated phone."""

    sim_card_status: Literal["active", "missing", "locked_pin", "locked_puk"] = "active"
    sim_card_missing: bool = False
    airplane_mode: bool = False
    network_signal_strength: SignalStrength = "good"
    network_technology_connected: Literal["none", "2G", "3G", "4G", "5G"] = "5G"
    network_connection_status: Literal["connected", "searching", "no_service", "emergency_only"] = (
        "connected"
    )
    battery_level: int = 80
    data_enabled: bool = True
    roaming_enabled: bool = False
    network_mode_preference: Literal["4g_5g_preferred", "4g_only", "3g_only", "2g_only"] = (
        "4g_5g_preferred"
    )
    active_apn_settings: APNSettings = Field(default_factory=APNSettings)
    wifi_enabled: bool = False
    wifi_connected: bool = False
    wifi_ssid: str | None = None
    wifi_signal_strength: SignalStrength = "none"
    wifi_calling_enabled: bool = False
    wifi_calling_mms_over_wifi: bool = False
    data_saver_mode: bool = False
    vpn_enabled_setting: bool = False
    vpn_connected: bool = False
    vpn_details: VpnDetails | None = None
    app_statuses: dict[str, AppStatus] = Field(default_factory=_default_apps)


class PaymentRequest(_Record):
    """A bill the carrier asked the user to pay."""

    bill_id: str
    amount_due: float
    paid: bool = False


def _default_signal() -> dict[str, SignalStrength]:
    return {"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"}


class Surroundings(_Record):
    """Where the user is and what the network allows them."""

    name: str | None = None
    phone_number: str | None = None
    is_abroad: bool = False
    roaming_allowed: bool = False
    signal_strength: dict[str, SignalStrength] = Field(default_factory=_default_signal)
    mobile_data_usage_exceeded: bool = False
    line_active: bool = True
    payment_request: PaymentRequest | None = None


class TelecomUserDB(_Record):
    """The user-side database: the phone and its surroundings."""

    device: PhoneState = Field(default_factory=PhoneState)
    surroundings: Surroundings = Field(default_factory=Surroundings)


# -- loading ---------------------------------------------------------------------------


def read_data_file(path: str | Path) -> dict[str, Any]:
    """Read a JSON or TOML file into a dict; any problem is an EnvironmentDataError."""
    path = Path(path)
    try:
        text = read_data_bytes(path).decode("utf-8")
    except OSError as exc:
        raise EnvironmentDataError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise EnvironmentDataError(
            f"{path}: not valid {path.suffix[1:] or 'JSON'}: {exc}"
        ) from None
    if not isinstance(data, dict):
        raise EnvironmentDataError(f"{path}: expected a mapping at the top level")
    return data


def validate_db(data: dict[str, Any], source: str) -> dict[str, Any]:
    """Validate agent-side data and return it with defaults filled in."""
    return _validated(TelecomDB, data, source)


def validate_user_db(data: dict[str, Any], source: str) -> dict[str, Any]:
    """Validate user-side data and return it with defaults filled in."""
    return _validated(TelecomUserDB, data, source)


def load_db(path: str | Path) -> dict[str, Any]:
    """Load an agent-side database file (τ²-bench ``db.toml`` or JSON)."""
    return validate_db(read_data_file(path), str(path))


def load_user_db(path: str | Path) -> dict[str, Any]:
    """Load a user-side database file (τ²-bench ``user_db.toml`` or JSON)."""
    return validate_user_db(read_data_file(path), str(path))


def _validated(model: type[BaseModel], data: dict[str, Any], source: str) -> dict[str, Any]:
    try:
        parsed = model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"])
        more = f" (and {len(exc.errors()) - 1} more problems)" if len(exc.errors()) > 1 else ""
        raise EnvironmentDataError(f"{source}: {where.lstrip('.')}: {err['msg']}{more}") from None
    dumped = parsed.model_dump(mode="json")
    if isinstance(parsed, TelecomDB):
        _check_references(dumped, source)
    return dumped


def _check_references(db: dict[str, Any], source: str) -> None:
    for kind in ("plans", "customers", "lines", "devices", "bills"):
        key = kind[:-1] + "_id"
        ids = [r[key] for r in db[kind]]
        if len(ids) != len(set(ids)):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise EnvironmentDataError(f"{source}: {kind}: duplicate id {dup!r}")
    plans = {p["plan_id"] for p in db["plans"]}
    lines = {ln["line_id"] for ln in db["lines"]}
    for index, line in enumerate(db["lines"]):
        if line["plan_id"] not in plans:
            raise EnvironmentDataError(
                f"{source}: lines[{index}].plan_id: unknown plan {line['plan_id']!r}"
            )
    for index, customer in enumerate(db["customers"]):
        for line_id in customer["line_ids"]:
            if line_id not in lines:
                raise EnvironmentDataError(
                    f"{source}: customers[{index}].line_ids: unknown line {line_id!r}"
                )


# -- the seeded generator --------------------------------------------------------------

PLANS: list[dict[str, Any]] = [
    {"plan_id": "P1001", "name": "Basic Plan", "data_limit_gb": 5.0, "price_per_month": 40.0,
     "data_refueling_price_per_gb": 5.0},
    {"plan_id": "P1002", "name": "Premium Plan", "data_limit_gb": 15.0, "price_per_month": 65.0,
     "data_refueling_price_per_gb": 2.0},
    {"plan_id": "P1003", "name": "Unlimited Plus", "data_limit_gb": 999.0,
     "price_per_month": 85.0, "data_refueling_price_per_gb": 0.1},
    {"plan_id": "P1004", "name": "Family Share", "data_limit_gb": 25.0, "price_per_month": 120.0,
     "data_refueling_price_per_gb": 3.0},
    {"plan_id": "P1005", "name": "IoT Basic", "data_limit_gb": 1.0, "price_per_month": 15.0,
     "data_refueling_price_per_gb": 10.0},
    {"plan_id": "P1006", "name": "Student Saver", "data_limit_gb": 8.0, "price_per_month": 30.0,
     "data_refueling_price_per_gb": 4.0},
    {"plan_id": "P1007", "name": "Travel Plus", "data_limit_gb": 20.0, "price_per_month": 75.0,
     "data_refueling_price_per_gb": 2.5},
]  # fmt: skip
PHONE_PLANS = ["P1001", "P1002", "P1003", "P1004", "P1006", "P1007"]

_FIRST = (
    "Ava Ben Chloe Daniel Elena Farid Grace Hiro Isla Jonas Keira Liam Maya Noah Olga Pedro "
    "Quinn Rosa Samir Tara Umar Vera Wen Xavier Yara Zane Amara Bruno Celia Dmitri Esme Felix "
    "Gita Hugo Ines Jamal Kofi Lena Mateo Nadia"
).split()
_LAST = (
    "Abbott Bauer Castillo Dubois Eriksen Fischer Garcia Hansen Ibrahim Jensen Kowalski Lopez "
    "Moreau Nakamura Okafor Petrov Quintero Rossi Schmidt Tanaka Ueda Varga Weber Xu Yilmaz "
    "Zimmer Adeyemi Brennan Costa Dalton"
).split()
_CITIES = [
    ("Austin", "TX", "787"), ("Denver", "CO", "802"), ("Portland", "OR", "972"),
    ("Columbus", "OH", "432"), ("Raleigh", "NC", "276"), ("Madison", "WI", "537"),
    ("Tucson", "AZ", "857"), ("Boise", "ID", "837"), ("Albany", "NY", "122"),
    ("Savannah", "GA", "314"),
]  # fmt: skip
_STREETS = "Maple Oak Pine Cedar Elm Birch Willow Lake Hill River Park Sunset".split()
_PHONE_MODELS = [
    ("phone", "Pixel 8", True), ("phone", "iPhone 15", True), ("phone", "Galaxy S23", True),
    ("phone", "Moto G Power", False), ("phone", "iPhone 12", True), ("phone", "Nokia G21", False),
]  # fmt: skip
_OTHER_MODELS = [
    ("tablet", "iPad Air", True), ("watch", "Galaxy Watch 6", True),
    ("router", "Nighthawk M6", False),
]  # fmt: skip

N_CUSTOMERS = 200


def generate_db(seed: int = 0) -> dict[str, Any]:
    """A fresh copy of the generated agent-side database for ``seed``."""
    return fast_copy(_generated(seed))


def shared_db(seed: int = 0) -> dict[str, Any]:
    """The generated agent-side database for ``seed``, shared: change it copy-on-write only."""
    return _generated(seed)


@functools.lru_cache(maxsize=4)
def _generated(seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    db: dict[str, Any] = {"plans": [dict(p) for p in PLANS], "customers": [], "lines": [],
                          "devices": [], "bills": []}  # fmt: skip
    plan_price = {p["plan_id"]: p["price_per_month"] for p in PLANS}
    plan_limit = {p["plan_id"]: p["data_limit_gb"] for p in PLANS}
    used_numbers: set[str] = set()
    used_names: set[str] = set()

    def pick(items: list[Any]) -> Any:
        return items[int(rng.integers(len(items)))]

    def phone_number() -> str:
        while True:
            number = f"555-{int(rng.integers(200, 999)):03d}-{int(rng.integers(1000, 9999)):04d}"
            if number not in used_numbers:
                used_numbers.add(number)
                return number

    for c_index in range(N_CUSTOMERS):
        customer_id = f"C{1001 + c_index}"
        while True:
            name = f"{pick(_FIRST)} {pick(_LAST)}"
            if name not in used_names:
                used_names.add(name)
                break
        city, state, zip_prefix = pick(_CITIES)
        dob = f"{int(rng.integers(1950, 2004))}-{int(rng.integers(1, 13)):02d}-"
        dob += f"{int(rng.integers(1, 29)):02d}"
        n_lines = int(rng.choice([1, 1, 1, 2, 2, 3]))
        line_ids = []
        for _ in range(n_lines):
            line_id = f"L{1001 + len(db['lines'])}"
            device_id = f"D{1001 + len(db['devices'])}"
            kind, model, esim = pick(
                _PHONE_MODELS if not line_ids else _PHONE_MODELS + _OTHER_MODELS
            )
            plan_id = "P1005" if kind in ("watch", "router") else pick(PHONE_PLANS)
            activated = f"20{int(rng.integers(21, 25))}-{int(rng.integers(1, 13)):02d}-15T10:00:00"
            db["devices"].append({
                "device_id": device_id, "device_type": kind, "model": model,
                "imei": "".join(str(int(d)) for d in rng.integers(0, 10, size=15)),
                "is_esim_capable": esim, "activated": True, "activation_date": activated,
                "last_esim_transfer_date": None,
            })  # fmt: skip
            limit = plan_limit[plan_id]
            used = round(float(rng.uniform(0.05, 0.8)) * min(limit, 30.0), 1)
            status = "Active" if rng.random() < 0.93 else pick(["Suspended", "Closed"])
            contract_year = int(rng.integers(2025, 2028))
            db["lines"].append({
                "line_id": line_id, "phone_number": phone_number(), "status": status,
                "plan_id": plan_id, "device_id": device_id, "data_used_gb": used,
                "data_refueling_gb": 0.0, "roaming_enabled": bool(rng.random() < 0.2),
                "contract_end_date": f"{contract_year}-{int(rng.integers(3, 13)):02d}-01",
                "last_plan_change_date": None, "last_sim_replacement_date": None,
                "suspension_start_date": "2025-02-01" if status == "Suspended" else None,
            })  # fmt: skip
            line_ids.append(line_id)
        bill_ids = []
        monthly = sum(plan_price[ln["plan_id"]] for ln in db["lines"][-n_lines:])
        for month, status in ((12, "Paid"), (1, "Issued"), (2, "Draft")):
            year = 2024 if month >= 11 else 2025
            bill_id = f"B{1001 + len(db['bills'])}"
            start = date(year, month, 1)
            issue = date(year + (month == 12), month % 12 + 1, 1)
            end = issue.toordinal() - 1
            items = [] if status == "Draft" else [
                {"description": f"Monthly charge {ln_id}", "item_type": "Plan Charge",
                 "amount": plan_price[db["lines"][int(ln_id[1:]) - 1001]["plan_id"]],
                 "date": start.isoformat()}
                for ln_id in line_ids
            ]  # fmt: skip
            db["bills"].append({
                "bill_id": bill_id, "customer_id": customer_id,
                "period_start": start.isoformat(),
                "period_end": date.fromordinal(end).isoformat(),
                "issue_date": issue.isoformat(),
                "due_date": date.fromordinal(issue.toordinal() + 28).isoformat(),
                "total_due": 0.0 if status == "Draft" else monthly,
                "line_items": items, "status": status,
            })  # fmt: skip
            bill_ids.append(bill_id)
        first = name.split()[0].lower()
        db["customers"].append({
            "customer_id": customer_id, "full_name": name, "date_of_birth": dob,
            "email": f"{first}.{name.split()[1].lower()}@example.com",
            "phone_number": db["lines"][-n_lines]["phone_number"],
            "address": {"street": f"{int(rng.integers(10, 9999))} {pick(_STREETS)} St",
                        "city": city, "state": state,
                        "zip_code": f"{zip_prefix}{int(rng.integers(10, 99))}"},
            "account_status": "Active",
            "payment_methods": [{"method_type": pick(["Credit Card", "Debit Card", "PayPal"]),
                                 "account_number_last_4": f"{int(rng.integers(0, 10000)):04d}",
                                 "expiration_date": f"{int(rng.integers(1, 13)):02d}/2028"}],
            "line_ids": line_ids, "bill_ids": bill_ids,
            "created_at": "2025-01-01T00:00:00", "last_extension_date": None,
            "goodwill_credit_used_this_year": 0.0,
        })  # fmt: skip
    return validate_db(db, f"<generated telecom db seed={seed}>")


def default_user_db() -> dict[str, Any]:
    """The user-side state of a healthy phone with no owner set yet."""
    return TelecomUserDB().model_dump(mode="json")

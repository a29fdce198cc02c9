"""moneyfmt: formatting, rounding and parsing of money amounts."""

from hasbench.envs.coding.repos import (
    Feature,
    Legacy,
    Mode,
    Rename,
    Repository,
    deprecated_alias,
    project_files,
)

FILES = {
    **project_files(
        "moneyfmt",
        "1.3.2",
        "Format, round and parse money amounts",
        ">>> from moneyfmt import format_amount, parse_amount\n"
        '>>> format_amount(12.5, "EUR")\n"12.50 EUR"\n'
        '>>> parse_amount("7.25 CHF")\n(Decimal("7.25"), "CHF")\n',
        "/moneyfmt/currencies.py @moneyfmt/finance\n",
    ),
    "moneyfmt/__init__.py": """\
\"\"\"moneyfmt: format, round and parse money amounts.\"\"\"

from moneyfmt._version import __version__
from moneyfmt.currencies import Currency, currency
from moneyfmt.format import format_amount, parse_amount, round_amount
from moneyfmt.legacy import money_str

__all__ = [
    "Currency",
    "__version__",
    "currency",
    "format_amount",
    "money_str",
    "parse_amount",
    "round_amount",
]
""",
    "moneyfmt/currencies.py": """\
\"\"\"The currencies moneyfmt knows, with their number of decimals.\"\"\"

from dataclasses import dataclass


@dataclass(frozen=True)
class Currency:
    \"\"\"An ISO 4217 currency.\"\"\"

    code: str
    decimals: int
    name: str


CURRENCIES = {
    c.code: c
    for c in (
        Currency("CHF", 2, "Swiss franc"),
        Currency("EUR", 2, "Euro"),
        Currency("GBP", 2, "Pound sterling"),
        Currency("JPY", 0, "Japanese yen"),
        Currency("KWD", 3, "Kuwaiti dinar"),
        Currency("USD", 2, "US dollar"),
    )
}


def currency(code):
    \"\"\"The currency with this ISO code (case-insensitive).\"\"\"
    try:
        return CURRENCIES[code.upper()]
    except KeyError:
        raise ValueError(f"unknown currency: {code}") from None
""",
    "moneyfmt/format.py": """\
\"\"\"Formatting, rounding and parsing of money amounts.\"\"\"

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from moneyfmt.currencies import currency


def _quantize(amount, decimals):
    \"\"\"Round an amount half up to a number of decimals.\"\"\"
    return amount.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def format_amount(value, code="EUR"):
    \"\"\"Format an amount with its currency code: ``format_amount(12.5)`` is ``"12.50 EUR"``.

    Negative amounts are not supported yet.
    \"\"\"
    info = currency(code)
    amount = _quantize(Decimal(str(value)), info.decimals)
    if amount < 0:
        raise ValueError(f"negative amount: {value}")
    return f"{amount} {info.code}"


def round_amount(value, code="EUR"):
    \"\"\"Round an amount to the number of decimals of its currency (half up).\"\"\"
    info = currency(code)
    return _quantize(Decimal(str(value)), info.decimals)


def parse_amount(text):
    \"\"\"Parse ``"12.50 EUR"`` into ``(Decimal("12.50"), "EUR")``.\"\"\"
    number, _, code = text.strip().partition(" ")
    info = currency(code.strip())
    try:
        amount = Decimal(number)
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None
    return _quantize(amount, info.decimals), info.code
""",
    "moneyfmt/legacy.py": deprecated_alias(
        "moneyfmt",
        "money_str",
        "format.format_amount",
        'value, code="EUR"',
        since="1.2",
        users="1.x",
        call="value, code",
    ),
    "tests/test_format.py": """\
from decimal import Decimal

import pytest

from moneyfmt import format_amount, parse_amount, round_amount


def test_format_uses_the_currency_decimals():
    assert format_amount(12.5) == "12.50 EUR"
    assert format_amount(999, "JPY") == "999 JPY"
    assert format_amount("0.1235", "KWD") == "0.124 KWD"


def test_round_amount_keeps_exact_amounts():
    assert round_amount("2.5") == Decimal("2.50")
    assert round_amount("7", "KWD") == Decimal("7.000")


def test_parse_amount():
    assert parse_amount("7.25 CHF") == (Decimal("7.25"), "CHF")
    with pytest.raises(ValueError):
        parse_amount("seven CHF")
""",
    "tests/test_currencies.py": """\
import pytest

from moneyfmt import currency


def test_lookup_is_case_insensitive():
    assert currency("usd").decimals == 2


def test_unknown_currency():
    with pytest.raises(ValueError):
        currency("XYZ")
""",
    "tests/test_legacy.py": """\
import pytest

from moneyfmt import money_str


def test_money_str_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert money_str(3) == "3.00 EUR"
""",
}


_FORMAT_OLD = '''\
def format_amount(value, code="EUR"):
    """Format an amount with its currency code: ``format_amount(12.5)`` is ``"12.50 EUR"``.

    Negative amounts are not supported yet.
    """
    info = currency(code)
    amount = _quantize(Decimal(str(value)), info.decimals)
    if amount < 0:
        raise ValueError(f"negative amount: {value}")
    return f"{amount} {info.code}"
'''

FEATURES = (
    Feature(
        key="moneyfmt.negative",
        module="moneyfmt/format.py",
        call="format_amount",
        imports="from moneyfmt import format_amount",
        summary="format_amount cannot format negative amounts",
        problem=(
            "format_amount raises ValueError for negative amounts, so refunds and "
            "credit notes cannot be printed."
        ),
        aspect="how negative amounts are written",
        fact_key="negative_amounts",
        option="negative",
        option_names=("sign_style", "negative_style", "negatives"),
        messages=("unsupported sign style", "unknown negative format", "invalid negative style"),
        default_message="unknown negative style",
        old=_FORMAT_OLD,
        new='''\
def format_amount(value, code="EUR"@PARAM@):
    """Format an amount with its currency code: ``format_amount(12.5)`` is ``"12.50 EUR"``."""
    @CHECK@
    info = currency(code)
    amount = _quantize(Decimal(str(value)), info.decimals)
    if amount >= 0:
        return f"{amount} {info.code}"
    digits = -amount
    @BRANCHES@
    return text
''',
        modes=(
            Mode(
                "minus",
                "a leading minus sign, so -12.5 in EUR is written -12.50 EUR",
                'text = f"-{digits} {info.code}"',
                (("-12.5", '"-12.50 EUR"'), ("-3, 'USD'", '"-3.00 USD"')),
            ),
            Mode(
                "parentheses",
                "the number in brackets, so -12.5 in EUR is written (12.50) EUR",
                'text = f"({digits}) {info.code}"',
                (("-12.5", '"(12.50) EUR"'), ("-1999, 'JPY'", '"(1999) JPY"')),
            ),
            Mode(
                "trailing",
                "the minus sign after the number, so -0.5 in EUR is written 0.50- EUR",
                'text = f"{digits}- {info.code}"',
                (("-0.5", '"0.50- EUR"'), ("-7.25, 'CHF'", '"7.25- CHF"')),
            ),
            Mode(
                "credit",
                "the amount followed by the code and CR, so -40 in EUR is written 40.00 EUR CR",
                'text = f"{digits} {info.code} CR"',
                (("-40", '"40.00 EUR CR"'), ("-1.5, 'GBP'", '"1.50 GBP CR"')),
            ),
        ),
    ),
    Feature(
        key="moneyfmt.grouping",
        module="moneyfmt/format.py",
        call="format_amount",
        imports="from moneyfmt import format_amount",
        summary="Large amounts are hard to read",
        problem=(
            "format_amount prints large amounts without digit grouping (1234567.50 EUR), "
            "which the invoice team finds hard to read."
        ),
        aspect="how the digits of large amounts are grouped",
        fact_key="digit_grouping",
        option="grouping",
        option_names=("thousands", "group_separator", "digit_groups"),
        messages=("unsupported grouping", "unknown thousands separator", "invalid digit grouping"),
        default_message="unknown grouping",
        old=_FORMAT_OLD,
        new='''\
def format_amount(value, code="EUR"@PARAM@):
    """Format an amount with its currency code: ``format_amount(12.5)`` is ``"12.50 EUR"``.

    Negative amounts are not supported yet.
    """
    @CHECK@
    info = currency(code)
    amount = _quantize(Decimal(str(value)), info.decimals)
    if amount < 0:
        raise ValueError(f"negative amount: {value}")
    whole, _, fraction = str(amount).partition(".")
    groups = []
    while len(whole) > 3:
        groups.insert(0, whole[-3:])
        whole = whole[:-3]
    groups.insert(0, whole)
    @BRANCHES@
    number = separator.join(groups) + (f".{fraction}" if fraction else "")
    return f"{number} {info.code}"
''',
        modes=(
            Mode(
                "comma",
                "groups of three digits separated by commas, as in 1,234,567.50 EUR",
                'separator = ","',
                (("1234567.5", '"1,234,567.50 EUR"'), ("1000, 'JPY'", '"1,000 JPY"')),
            ),
            Mode(
                "space",
                "groups of three digits separated by a space, as in 1 234 567.50 EUR",
                'separator = " "',
                (("1234567.5", '"1 234 567.50 EUR"'), ("25000, 'CHF'", '"25 000.00 CHF"')),
            ),
            Mode(
                "apostrophe",
                "groups separated by an apostrophe, as in 1'234'567.50 EUR",
                'separator = "\'"',
                (("1234567.5", "\"1'234'567.50 EUR\""), ("98765.4321, 'KWD'", '"98\'765.432 KWD"')),
            ),
            Mode(
                "underscore",
                "groups separated by underscores, as in 1_234_567.50 EUR",
                'separator = "_"',
                (("1234567.5", '"1_234_567.50 EUR"'), ("4500, 'USD'", '"4_500.00 USD"')),
            ),
        ),
    ),
    Feature(
        key="moneyfmt.rounding",
        module="moneyfmt/format.py",
        call="round_amount",
        imports="from decimal import Decimal\n\nfrom moneyfmt import round_amount",
        summary="round_amount always rounds half up",
        problem=(
            "round_amount always rounds half up, but the accounting export needs a "
            "different rounding rule."
        ),
        aspect="which rounding rule round_amount applies",
        fact_key="rounding_rule",
        option="rounding",
        option_names=("strategy", "rounding_mode", "method"),
        messages=("unsupported rounding rule", "unknown rounding mode", "invalid rounding"),
        default_message="unknown rounding",
        old='''\
def round_amount(value, code="EUR"):
    """Round an amount to the number of decimals of its currency (half up)."""
    info = currency(code)
    return _quantize(Decimal(str(value)), info.decimals)
''',
        new='''\
def round_amount(value, code="EUR"@PARAM@):
    """Round an amount to the number of decimals of its currency."""
    @CHECK@
    info = currency(code)
    step = Decimal(1).scaleb(-info.decimals)
    @BRANCHES@
    return Decimal(str(value)).quantize(step, rounding=rounding_constant)
''',
        modes=(
            Mode(
                "half_even",
                "ties go to the even digit (banker's rounding), so 0.125 EUR becomes 0.12",
                'rounding_constant = "ROUND_HALF_EVEN"',
                (("'0.125'", 'Decimal("0.12")'), ("'2.5', 'JPY'", 'Decimal("2")')),
            ),
            Mode(
                "down",
                "always towards zero (truncate), so 0.129 EUR becomes 0.12",
                'rounding_constant = "ROUND_DOWN"',
                (("'0.129'", 'Decimal("0.12")'), ("'-1.999'", 'Decimal("-1.99")')),
            ),
            Mode(
                "up",
                "always away from zero, so 0.121 EUR becomes 0.13",
                'rounding_constant = "ROUND_UP"',
                (("'0.121'", 'Decimal("0.13")'), ("'10.0001', 'JPY'", 'Decimal("11")')),
            ),
            Mode(
                "half_down",
                "ties go towards zero, so 0.125 EUR becomes 0.12 and 0.135 EUR becomes 0.13",
                'rounding_constant = "ROUND_HALF_DOWN"',
                (("'0.125'", 'Decimal("0.12")'), ("'0.135'", 'Decimal("0.13")')),
            ),
        ),
    ),
)

REPOSITORY = Repository(
    name="moneyfmt",
    description="a small library that formats, rounds and parses money amounts",
    files=FILES,
    features=FEATURES,
    legacy=Legacy("moneyfmt/legacy.py", "money_str", "tests/test_legacy.py"),
    rename=Rename(
        "moneyfmt/format.py",
        "parse_amount",
        "parse_money",
        'moneyfmt.parse_money("7.25 CHF") == (Decimal("7.25"), "CHF")',
        "from decimal import Decimal",
    ),
    dependency="babel>=2.14",
    next_version="1.4.0",
)

"""datekit: parse dates, count working days and describe durations."""

from datekit._version import __version__
from datekit.business import add_business_days, is_business_day
from datekit.humanize import describe_duration
from datekit.legacy import to_date
from datekit.parse import parse_date

__all__ = [
    "__version__",
    "add_business_days",
    "describe_duration",
    "is_business_day",
    "parse_date",
    "to_date",
]

"""Working days."""

from datetime import timedelta


def is_business_day(day, holidays=()):
    """Whether a date is a working day: Monday to Friday and not a holiday."""
    return day.weekday() < 5 and day not in holidays


def add_business_days(start, days, holidays=()):
    """The date ``days`` working days after ``start`` (Saturday and Sunday are off)."""
    if days < 0:
        raise ValueError("days must not be negative")
    current = start
    while days:
        current += timedelta(days=1)
        if is_business_day(current, holidays):
            days -= 1
    return current

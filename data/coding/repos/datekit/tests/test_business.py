from datetime import date

from datekit import add_business_days, is_business_day


def test_midweek_days():
    monday = date(2024, 3, 4)
    assert add_business_days(monday, 2) == date(2024, 3, 6)
    assert add_business_days(monday, 0) == monday


def test_holidays_are_skipped():
    assert not is_business_day(date(2024, 3, 4), holidays={date(2024, 3, 4)})
    tuesday = date(2024, 3, 5)
    assert add_business_days(tuesday, 1, holidays={date(2024, 3, 6)}) == date(2024, 3, 7)

from datetime import date

import pytest

from datekit import to_date


def test_to_date_still_works_but_warns():
    with pytest.warns(DeprecationWarning):
        assert to_date("2020-01-02") == date(2020, 1, 2)

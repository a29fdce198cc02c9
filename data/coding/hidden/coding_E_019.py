"""Hidden acceptance tests of coding_E_019 (generated; never shown to agents)."""

import pytest
import re
from statskit import moving_average


def test_default_behaviour_1():
    assert moving_average([2, 4, 6, 8], 2) == [2.0, 3.0, 5.0, 7.0]


def test_default_behaviour_2():
    assert moving_average([3, 6, 9], 3) == [3.0, 4.5, 6.0]


def test_option_value_1():
    assert moving_average([2, 4, 6, 8], 2, partial='none') == [None, 3.0, 5.0, 7.0]


def test_option_value_2():
    assert moving_average([3, 6, 9], 3, partial='none') == [None, None, 6.0]


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('unsupported edge handling')):
        moving_average([2, 4, 6, 8], 2, partial='no-such-value')

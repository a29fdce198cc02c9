"""Hidden acceptance tests of coding_E_020 (generated; never shown to agents)."""

import pytest
import re
from statskit import percentile


def test_default_behaviour_1():
    assert percentile([10, 20, 30, 40, 50], 30) == 30


def test_default_behaviour_2():
    assert percentile([1, 2, 3, 4], 10) == 2


def test_option_value_1():
    assert percentile([10, 20, 30, 40, 50], 30, definition='linear') == pytest.approx(22.0)


def test_option_value_2():
    assert percentile([1, 2, 3, 4], 50, definition='linear') == pytest.approx(2.5)


def test_unknown_value_is_rejected():
    with pytest.raises(ValueError, match=re.escape('unsupported percentile method')):
        percentile([10, 20, 30, 40, 50], 30, definition='no-such-value')

import pytest

from cliargs import parse_args


def test_switches_and_arguments():
    result = parse_args(["--verbose", "build"], {"verbose": bool, "jobs": int})
    assert result == {"verbose": True, "jobs": None, "args": ["build"]}


def test_unknown_option():
    with pytest.raises(ValueError):
        parse_args(["--nope"], {"jobs": int})


def test_missing_value():
    with pytest.raises(ValueError):
        parse_args(["--jobs"], {"jobs": int})

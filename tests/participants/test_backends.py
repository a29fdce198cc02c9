"""Backend strings: one reader for every ``name?key=value`` string."""

import pytest

from hasbench.participants.backends import BackendSpec, parse_spec


def test_a_backend_string_gives_its_name_preset_or_options():
    assert parse_spec("scripted:standin") == BackendSpec("scripted:standin")
    assert parse_spec("scripted:standin?weak", presets=("weak",)).preset == "weak"
    read = parse_spec("human:notebook?play=user_1&others=scripted:user", ("play", "others"))
    assert read.options == {"play": "user_1", "others": "scripted:user"}
    assert parse_spec("x?ask=0.5&check=1", ("ask", "check")).probabilities("x") == {
        "ask": 0.5,
        "check": 1.0,
    }


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("x?grit=1", r"x\?grit=1: unknown option\(s\) \['grit'\]; known: ask"),
        ("x?genius", "'genius' is neither key=value nor a preset"),
        ("x?ask=1&ask=0", "option 'ask' is given twice"),
    ],
)
def test_a_bad_backend_string_is_refused_naming_it(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_spec(spec, ("ask",))


@pytest.mark.parametrize(("raw", "message"), [("2", "outside"), ("high", "not a number")])
def test_options_read_as_probabilities_must_be_numbers_in_the_unit_interval(raw, message):
    with pytest.raises(ValueError, match=message):
        parse_spec(f"x?ask={raw}", ("ask",)).probabilities(f"x?ask={raw}")

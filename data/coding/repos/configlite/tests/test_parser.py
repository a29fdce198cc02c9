import pytest

from configlite import parse_config

TEXT = """
# service settings
[db]
host = localhost
port = 5432
debug = TRUE
"""


def test_values():
    config = parse_config(TEXT)
    assert config.get("db", "host") == "localhost"
    assert config.get_int("db", "port") == 5432
    assert config.get_bool("db", "debug") is True
    assert config.get("db", "user", "admin") == "admin"


def test_not_a_boolean():
    with pytest.raises(ValueError):
        parse_config("[a]\nflag = maybe\n").get_bool("a", "flag")

from cliargs import format_usage


def test_usage_line():
    assert format_usage("tool", {"jobs": int, "verbose": bool}) == (
        "usage: tool [--jobs INT] [--verbose]"
    )

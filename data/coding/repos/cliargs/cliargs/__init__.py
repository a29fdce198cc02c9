"""cliargs: small helpers for command-line programs."""

from cliargs._version import __version__
from cliargs.confirm import parse_yes_no
from cliargs.legacy import getopts
from cliargs.parser import parse_args
from cliargs.usage import format_usage

__all__ = [
    "__version__",
    "format_usage",
    "getopts",
    "parse_args",
    "parse_yes_no",
]

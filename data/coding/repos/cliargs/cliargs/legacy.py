"""Deprecated names kept for cliargs 0.3 users."""

import warnings

from cliargs.parser import parse_args


def getopts(argv, spec):
    """Deprecated since 0.4: use parse_args."""
    warnings.warn("getopts is deprecated; use parse_args", DeprecationWarning, stacklevel=2)
    return parse_args(argv, spec)

"""Deprecated names kept for tablefmt 1.x users."""

import warnings

from tablefmt.render import render


def tabulate_rows(rows, headers):
    """Deprecated since 2.0: use render."""
    warnings.warn("tabulate_rows is deprecated; use render", DeprecationWarning, stacklevel=2)
    return render(rows, headers)

"""tablefmt: rows as plain-text tables."""

from tablefmt._version import __version__
from tablefmt.legacy import tabulate_rows
from tablefmt.render import column_widths, render

__all__ = [
    "__version__",
    "column_widths",
    "render",
    "tabulate_rows",
]

"""csvlite: read and write delimited text."""

from csvlite._version import __version__
from csvlite.legacy import load_csv
from csvlite.reader import read_records, split_line
from csvlite.writer import write_records

__all__ = [
    "__version__",
    "load_csv",
    "read_records",
    "split_line",
    "write_records",
]

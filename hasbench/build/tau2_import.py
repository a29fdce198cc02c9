"""Import τ²-bench tasks (retail, airline, telecom) into our task schema.

A τ²-bench task file is a JSON list of tasks (or ``{"tasks": [...]}``). Each task becomes
one scenario with a single agent ``agent_0`` serving a single customer ``user_0``:

- the customer comes from ``user_scenario``: ``reason_for_call`` (or the plain-text
  instructions) is the goal, ``task_instructions`` plus the prose ``known_info`` and any
  persona paragraph are the behaviour instructions, and the ids, e-mail, zip code, phone
  number and name found in the scenario text become ``known_info`` entries (so the agent
  has to ask for them); ``unknown_info``'s prose joins the behaviour instructions and the
  facts it says the customer lacks become ``unknown_info`` names (``email``, ``order_id``);
- the criteria map ``DB`` → ``ENV``, ``NL_ASSERTION`` → ``NL_ASSERTIONS`` (the others keep
  their names), requestor ``assistant`` → ``agent_0`` and ``user`` → ``user_0``, with
  ``compare_args`` kept; a dimension whose criterion is empty is left out of the basis
  (τ²-bench counts an empty criterion as passed; ours never does), and a task left with
  no dimension is skipped and reported;
- the initial state (``initialization_data``, ``initialization_actions``) goes to the
  environment block; a non-empty ``message_history`` cannot be represented and is refused;
- ``environment.db_path`` (and for telecom ``user_db_path``) point at the given files.

For telecom, whose gold paths have no lookup, a ``get_customer_by_phone`` step is put
first when the customer's phone number is known, the basis does not score ACTION, and a
later gold action needs the customer id: it is what the policy asks for first, it changes
no state, and it lets a team observe the ids it must use.

Every imported task is validated and its environment initialized against the given
database before anything is written; problems name the file, the task and the field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from hasbench.agency import Setting
from hasbench.build import sources
from hasbench.build.builder import dump_tasks
from hasbench.build.reachability import Reach, make_reachable
from hasbench.envs import environment_class
from hasbench.envs.base import EnvironmentDataError
from hasbench.paths import is_data_file
from hasbench.registry import all_domains
from hasbench.scenario import Scenario, ScenarioError, checked_scenario

PERSONA_HEADING = "How you come across:"
"""Opens the persona paragraph the importer adds to the behaviour instructions."""

REWARD_NAMES = {
    "DB": "ENV",
    "ENV_ASSERTION": "ENV_ASSERTION",
    "ACTION": "ACTION",
    "COMMUNICATE": "COMMUNICATE",
    "NL_ASSERTION": "NL_ASSERTIONS",
}
REQUESTORS = {"assistant": "agent_0", "user": "user_0"}
PROFILE = (
    "Customer service agent of the {domain} company. Serves one customer, using the "
    "company's tools and following its policy."
)
TASK = (
    "A customer contacts {domain} customer service. Find out what they need and help them, "
    "following the policy."
)
DEFAULT = Setting()
"""Tasks whose reference solution needs more than the default setting allows get their
own limits: ``environment.max_tool_rounds`` = twice the gold path plus the customer's
facts (a call and a question or approval per step), ``environment.interaction_budget``
= the gold path plus the customer's facts (an approval or device step per action, a
question per fact)."""
MAX_ITERATIONS = 60
"""At least this many iterations; tasks with long gold paths get 20 + 5 per gold action."""


class Tau2ImportError(ValueError):
    """A τ²-bench file that cannot be imported; the message names file, task and field."""


# -- the τ²-bench task format (unknown keys are ignored, as τ²-bench does) ----------------


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Instructions(_Loose):
    domain: str | None = None
    reason_for_call: str
    known_info: str | None = None
    unknown_info: str | list[str] | None = None
    task_instructions: str


class _UserScenario(_Loose):
    persona: str | None = None
    instructions: str | _Instructions


class _EnvCall(_Loose):
    env_type: Literal["assistant", "user"]
    func_name: str
    arguments: dict[str, Any] = {}


class _EnvAssertion(_EnvCall):
    assert_value: bool = True
    message: str | None = None


class _InitData(_Loose):
    agent_data: dict[str, Any] | None = None
    user_data: dict[str, Any] | None = None


class _InitialState(_Loose):
    initialization_data: _InitData | None = None
    initialization_actions: list[_EnvCall] | None = None
    message_history: list[Any] | None = None


class _Action(_Loose):
    action_id: str
    requestor: Literal["assistant", "user"] = "assistant"
    name: str
    arguments: dict[str, Any] = {}
    info: str | None = None
    compare_args: list[str] | None = None


class _Criteria(_Loose):
    actions: list[_Action] | None = None
    env_assertions: list[_EnvAssertion] | None = None
    communicate_info: list[str] | None = None
    nl_assertions: list[str] | None = None
    reward_basis: list[Literal["DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE"]] = [
        "DB",
        "COMMUNICATE",
    ]


class _Task(_Loose):
    id: str
    user_scenario: _UserScenario
    initial_state: _InitialState | None = None
    evaluation_criteria: _Criteria | None = None
    user_tools: list[str] | None = None
    """Later τ²-bench versions may restrict the user's (telecom) tools to these."""


# -- facts the customer holds ------------------------------------------------------------

_FACTS: list[tuple[str, re.Pattern[str]]] = [
    ("email", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")),
    ("user_id", re.compile(r"\b[a-z]+_[a-z]+_\d{4}\b")),
    ("order_id", re.compile(r"(?<![\w#])#?(W\d{7})\b")),
    ("phone_number", re.compile(r"\b\d{3}-\d{3}-\d{4}\b")),
    ("customer_id", re.compile(r"\bC\d{4}\b")),
    ("flight_number", re.compile(r"\b(HAT\d{3})\b")),
    ("reservation_id", re.compile(r"(?<![\w#$])([A-Z0-9]{6})(?![\w])")),
    ("zip", re.compile(r"(?<![\w$.-])(\d{5})(?!\w|\.\d|-|,\d)")),
    (
        "payment_method",
        re.compile(
            r"(?i)\b((?:credit card|debit card|gift card|paypal)"
            r" (?:ending|that ends) (?:in|with) \d{4})"
        ),
    ),
    (
        "name",
        re.compile(
            r"(?i:\byou are|\byour name is|\bname is)\s+"
            r"([A-Z][a-z]+(?: [A-Z][a-z]+)+)"
        ),
    ),
]
_RESERVATION_CONTEXT = re.compile(r"(?i)(reservation|confirmation|booking)[^.]{0,40}$")


def extract_facts(text: str) -> dict[str, str]:
    """Ids, e-mail, zip code, phone number, flights, payment methods and name in a text.

    Order ids are given with their "#" whether or not the text writes it; a 6-character
    code is a reservation id when it has a digit or follows "reservation"/"confirmation"
    (flight numbers like HAT045 are flight numbers); a zip code is any standalone
    five-digit number ("zip code is 19122", "zipcode 19122", "Denver, 80280"). A name
    ("You are Mia Li", "Your name is ...") gives ``name`` (its parts are added on
    import where a tool takes them). A payment method counts when it names its last
    digits. Repeated kinds get numbered keys (``order_id``, ``order_id_2``, ...).
    """
    facts: dict[str, str] = {}
    for key, pattern in _FACTS:
        values: list[str] = []
        if key == "name":
            match = pattern.search(text)
            if match:
                facts["name"] = match.group(1)
            continue
        for match in pattern.finditer(text):
            value = match.group(match.lastindex or 0)
            if key == "order_id":
                value = f"#{value}"
            if key == "reservation_id" and not _is_reservation(value, text[: match.start()]):
                continue
            if value not in values:
                values.append(value)
        for number, value in enumerate(values, start=1):
            facts[key if number == 1 else f"{key}_{number}"] = value
    return facts


_UNKNOWN_TOPICS = {
    "email": r"\be-?mail",
    "order_id": r"\border (?:id|number)",
    "reservation_id": r"\breservation (?:id|number|code)",
    "user_id": r"\buser id",
    "flight_number": r"\bflight number",
    "cabin": r"\bcabin\b",
    "dob": r"\bdob\b|\bdate of birth|\bbirthday",
    "zip": r"\bzip",
    "phone_number": r"\bphone number",
}
"""Fact name -> how τ²'s prose names it (in a sentence that says it is not known)."""
_NOT_KNOWN = re.compile(
    r"\b(?:do not|don't|does not|doesn't|cannot|can't|can not)\s+(?:remember|know|recall|have)"
    r"\b|\bforg[eo]t",
    re.IGNORECASE,
)


def unknown_facts(text: str) -> list[str]:
    """The names of the facts τ²'s ``unknown_info`` prose says the customer lacks.

    Only sentences saying something is not known or not had count ("You do not remember
    your email address" gives ``email``); the prose itself stays in the instructions.
    """
    found: list[str] = []
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        if not _NOT_KNOWN.search(sentence):
            continue
        for name, pattern in _UNKNOWN_TOPICS.items():
            if re.search(pattern, sentence, re.IGNORECASE) and name not in found:
                found.append(name)
    return found


def _is_reservation(code: str, before: str) -> bool:
    if re.fullmatch(r"HAT\d{3}|W\d{5}|\d{6}", code) or not re.search(r"[A-Z]", code):
        return False
    return bool(re.search(r"\d", code)) or bool(_RESERVATION_CONTEXT.search(before))


# -- conversion --------------------------------------------------------------------------


def read_tau2_tasks(path: str | Path) -> list[dict[str, Any]]:
    """The raw task objects of a τ²-bench task file (on disk or inside the wheel).

    Raises:
        Tau2ImportError: the file cannot be read or holds no task list.
    """
    try:
        return sources.read_tau2_tasks(path)
    except sources.SourceError as error:
        raise Tau2ImportError(str(error)) from None


def convert_task(
    raw: Any,
    *,
    domain: str,
    task_id: str,
    db_path: str,
    user_db_path: str | None = None,
    pattern: str = "A",
    source: str = "<tasks>",
) -> tuple[Scenario | None, str | None]:
    """One τ²-bench task as a scenario, or (None, why it was skipped).

    Raises:
        Tau2ImportError: the task is malformed or cannot be represented.
    """
    label = f"{source}: task {raw.get('id', '?') if isinstance(raw, dict) else '?'}"
    try:
        task = _Task.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"])
        raise Tau2ImportError(f"{label}: {where.lstrip('.')}: {err['msg']}") from None
    label = f"{source}: task {task.id}"
    state = task.initial_state or _InitialState()
    if state.message_history:
        raise Tau2ImportError(
            f"{label}: initial_state.message_history: a replayed conversation cannot be "
            "imported; remove it or start the task from its initial state"
        )
    user = _user(task, domain)
    criteria, dropped = _criteria(task, user)
    if not criteria["reward_basis"]:
        return None, f"task {task.id}: no criterion left to score (dropped {dropped})"
    n_actions = len(criteria["actions"])
    environment: dict[str, Any] = {
        "max_iterations": max(MAX_ITERATIONS, 20 + 5 * n_actions),
        "db_path": db_path,
        "compat": "tau2",
    }
    if user_db_path:
        environment["user_db_path"] = user_db_path
    if state.initialization_data is not None:
        environment["initialization_data"] = state.initialization_data.model_dump()
    environment["initialization_actions"] = [
        a.model_dump() for a in state.initialization_actions or []
    ]
    scenario = {
        "task_id": task_id,
        "source_task_id": task.id,
        "adaptation_pattern": pattern,
        "coordination_mode": "star",
        "task": TASK.format(domain=domain),
        "relationships": [["user_0", "agent_0", "supervises"]],
        "environment": environment,
        "agents": [{"agent_id": "agent_0", "profile": PROFILE.format(domain=domain)}],
        "users": [user],
        "evaluation_criteria": criteria,
        "metadata": {"source": "tau2-bench", "source_file": Path(source).name}
        | ({"dropped_reward_basis": dropped} if dropped else {}),
    }
    try:
        return checked_scenario(scenario), None
    except ScenarioError as exc:
        raise Tau2ImportError(f"{label}: {exc}") from None


def _user(task: _Task, domain: str) -> dict[str, Any]:
    scenario = task.user_scenario
    instructions = scenario.instructions
    if isinstance(instructions, str):
        goal, behaviour, known_text, unknown = instructions, "", "", []
    else:
        goal = instructions.reason_for_call
        behaviour = instructions.task_instructions
        known_text = instructions.known_info or ""
        unknown = instructions.unknown_info or []
        unknown = [unknown] if isinstance(unknown, str) else list(unknown)
    parts = [behaviour]
    if known_text:
        parts.append(f"What you know: {known_text}")
    unknown_text = " ".join(u.strip() for u in unknown if u.strip(" ."))
    if unknown_text:
        parts.append(f"What you do not know: {unknown_text}")
    if scenario.persona:
        parts.append(f"{PERSONA_HEADING} {scenario.persona}")
    user_tools: list[str] = []
    if domain == "telecom":
        env_class = environment_class(domain)
        user_tools = sorted(n for n, s in env_class._specs.items() if s.side == "user")
        if task.user_tools is not None:
            user_tools = sorted(task.user_tools)
    known = extract_facts("\n".join([goal, known_text, behaviour]))
    return {
        "user_id": "user_0",
        "role": "customer",
        "goal": goal,
        "task_instructions": "\n\n".join(p for p in parts if p),
        "known_info": known,
        "unknown_info": [k for k in unknown_facts(unknown_text) if k not in known],
        "tools": user_tools,
    }


def _criteria(task: _Task, user: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    raw = task.evaluation_criteria or _Criteria()
    actions = [
        {
            "action_id": a.action_id,
            "requestor": REQUESTORS[a.requestor],
            "name": a.name,
            "arguments": a.arguments,
            "info": a.info,
            "compare_args": a.compare_args,
        }
        for a in raw.actions or []
    ]
    basis = [REWARD_NAMES[name] for name in raw.reward_basis]
    phone = user["known_info"].get("phone_number")
    needs_id = any("customer_id" in a["arguments"] for a in actions)
    if phone and needs_id and "ACTION" not in basis and user["tools"]:
        actions.insert(
            0,
            {
                "action_id": "identify",
                "requestor": "agent_0",
                "name": "get_customer_by_phone",
                "arguments": {"phone_number": phone},
                "info": "added on import: identify the customer first (policy)",
                "compare_args": ["phone_number"],
            },
        )
    criteria = {
        "actions": actions,
        "env_assertions": [a.model_dump() for a in raw.env_assertions or []],
        "communicate_info": list(raw.communicate_info or []),
        "nl_assertions": list(raw.nl_assertions or []),
    }
    populated = {
        # τ²-bench: an explicit empty action list means "the database must not change"
        "ENV": raw.actions is not None,
        "ACTION": actions,
        "ENV_ASSERTION": criteria["env_assertions"],
        "COMMUNICATE": criteria["communicate_info"],
        "NL_ASSERTIONS": criteria["nl_assertions"],
    }
    kept = [name for name in dict.fromkeys(basis) if populated[name]]
    dropped = [name for name in dict.fromkeys(basis) if not populated[name]]
    return criteria | {"reward_basis": kept}, dropped


def import_tau2(
    tasks_file: str | Path,
    *,
    db: str | Path,
    domain: str,
    user_db: str | Path | None = None,
    pattern: str = "A",
    only: set[str] | None = None,
) -> tuple[list[Scenario], list[str]]:
    """Convert a τ²-bench task file; returns the scenarios and the skipped-task notes.

    Each task is converted on its own: one that cannot be imported (a tool the domain
    lacks, an initial state that fails on the database, a field it cannot represent) is
    skipped with its reason and the others import. Every scenario's environment is built
    against the database, so what imports is known to run.

    Args:
        tasks_file: the task file (on disk or inside the wheel).
        db: the domain's database file.
        user_db: telecom's phone database (telecom only).
        domain: the domain the tasks belong to.
        pattern: the pattern label of the imported tasks.
        only: import only the tasks with these τ² ids.

    Raises:
        Tau2ImportError: the file, a database or the domain is unusable, or no task could
            be imported because of the database.
    """
    if domain not in tau2_domains():
        choices = ", ".join(tau2_domains())
        raise Tau2ImportError(f"unknown domain {domain!r}; choose one of {choices}")
    if (domain == "telecom") != (user_db is not None):
        raise Tau2ImportError("--user-db is required for telecom and only allowed for telecom")
    source = str(tasks_file)
    for path in (db, user_db):
        if path is not None and not is_data_file(path):
            raise Tau2ImportError(f"{path}: database file not found")
    scenarios: list[Scenario] = []
    skipped: list[str] = []
    database_errors = 0
    env_class = environment_class(domain)
    for index, raw in enumerate(read_tau2_tasks(tasks_file)):
        label = raw.get("id", f"[{index}]") if isinstance(raw, dict) else f"[{index}]"
        if only is not None and str(label) not in only:
            continue
        task_id = f"{domain}_{pattern}_{len(scenarios) + 1:03d}"
        try:
            if not isinstance(raw, dict):
                raise Tau2ImportError(f"{source}: task [{index}]: expected an object")
            scenario, note = convert_task(
                raw, domain=domain, task_id=task_id, db_path=str(db),
                user_db_path=None if user_db is None else str(user_db), pattern=pattern,
                source=source,
            )  # fmt: skip
            if scenario is None:
                skipped.append(note or f"task {label}: nothing to import")
                continue
            try:
                env = env_class.from_scenario(scenario)
            except EnvironmentDataError as exc:
                database_errors += 1
                raise Tau2ImportError(f"{source}: task {label}: {exc}") from None
            scenarios.append(_with_reach(scenario, make_reachable(scenario, env), source))
        except Tau2ImportError as error:
            skipped.append(str(error))
    if not scenarios and database_errors and database_errors == len(skipped):
        raise Tau2ImportError(f"no task imports with {db}: {skipped[0]}")
    return scenarios, skipped


def distinct_fact_names(facts: dict[str, Any], actions: list[dict[str, Any]]) -> dict[str, Any]:
    """Facts renamed so that a fact named like an argument is that argument's value.

    A customer's fact ``order_id`` reads as "the order id to use"; when the gold path
    uses that argument with another value too (two orders, or a login zip code beside
    a new address's), every fact of that kind is numbered instead (``order_id_1``,
    ``order_id_2``), so nobody takes one of them for the value of every call.
    """
    used: dict[str, set[str]] = {}
    for action in actions:
        for key, value in action.get("arguments", {}).items():
            if isinstance(value, str | int | float):
                used.setdefault(key, set()).add(str(value))
    clashing = {
        key
        for key, value in facts.items()
        if key in used and used[key] - {str(value)}
        and not re.search(r"_\d+$", key)
    }  # fmt: skip
    return {f"{key}_1" if key in clashing else key: value for key, value in facts.items()}


def _with_reach(scenario: Scenario, reach: Reach, source: str) -> Scenario:
    """The scenario with the lookups and customer facts that make its gold path reachable."""
    data = scenario.model_dump(exclude_defaults=True)
    data["evaluation_criteria"]["actions"] = reach.actions
    known = distinct_fact_names(reach.known_info, reach.actions)
    data["users"][0]["known_info"] = known
    unknown = [k for k in data["users"][0].get("unknown_info", []) if k not in known]
    data["users"][0]["unknown_info"] = unknown
    data["environment"]["max_iterations"] = max(MAX_ITERATIONS, 20 + 5 * len(reach.actions))
    rounds = 2 * len(reach.actions) + len(reach.known_info)
    if rounds > DEFAULT.max_tool_rounds:
        data["environment"]["max_tool_rounds"] = rounds
    events = len(reach.actions) + len(reach.known_info)
    if events > DEFAULT.interaction_budget:
        data["environment"]["interaction_budget"] = events
    data["metadata"] |= {
        "gold_arguments": reach.sources,
        "added_on_import": {"lookups": reach.inserted, "facts": reach.given},
    } | ({"unreachable": reach.unreachable} if reach.unreachable else {})
    data["metadata"] |= {"failing_reads": reach.failing_reads} if reach.failing_reads else {}
    label = f"{source}: task {scenario.source_task_id}"
    try:
        return checked_scenario(data)
    except ScenarioError as exc:
        raise Tau2ImportError(f"{label}: {exc}") from None


def tau2_domains() -> list[str]:
    """The registered domains whose tasks can be imported from τ²-bench."""
    return [domain.name for domain in all_domains() if "tau2" in domain.sources]


def write_tasks(scenarios: list[Scenario], out: str | Path) -> Path:
    """Write imported scenarios as a task YAML file."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(dump_tasks(scenarios), encoding="utf-8")
    return out

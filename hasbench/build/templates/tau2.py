"""Pattern templates for the τ²-bench domains (retail, airline, telecom).

Each template starts from the imported task (:mod:`hasbench.build.tau2_import`) and keeps
its goal, initial state (database, initialization), tools, transitions (the domain and its
τ² compatibility mode) and criteria (gold actions and reward basis); it changes who knows
what, who decides and when, as the pattern requires. The agent serves the humans alone,
so every scenario is in star mode. Personas are drawn from the domain's personas that can
take part in the gold path (:func:`hasbench.build.builder.suitable_personas`).

- A (information asymmetry): the customer's identifying facts and request details stay
  private, and in telecom only the subscriber sees and operates the phone; the agent has to
  ask. Needs a gold path that uses such a fact or device step.
- B (latent constraint): the condition and preference sentences of the customer's
  behaviour instructions (not the opening request, which is public setup) become a private
  acceptance criterion that decides the gold writes with a chosen argument
  (``depends_on``); the customer states it only when asked.
- C (authorization): the agent's riskiest write becomes protected; the customer, as account
  holder, approves it over an ``authorizes`` edge.
- D (stakeholders): the facts are split between the account holder (identity, the final
  say) and a second person (the request's details, device steps in telecom) who wants a
  different value for a chosen argument (another payment method, more data, another plan)
  than the account holder decides; the gold path follows the account holder.
- E (verification, telecom): the subscriber confirms the fix on the phone at the end (a
  user-side check joins the gold path, where ACTION is not scored) and reviews the work
  over a ``reviews`` edge.
- F (goal revision, retail and airline): the customer first asks for the first write only;
  the rest arrives as a goal revision at turn 2-4, and the later writes depend on it.
"""

from __future__ import annotations

import re
from typing import Any

from hasbench.build.adaptation import AdaptContext, Declined, template
from hasbench.build.base_tasks import BaseTask
from hasbench.build.builder import suitable_personas
from hasbench.build.patterns import CHOICE_KEYS, criterion_sentences
from hasbench.envs import environment_class, make_environment
from hasbench.participants.scripted import action_needs
from hasbench.personas import domain_personas

DOMAINS = ("retail", "airline", "telecom")
ROLE = {"retail": "customer", "airline": "traveller", "telecom": "subscriber"}
SECOND = {
    "retail": ("household member", "placed the orders with the account holder's account"),
    "airline": ("travel companion", "is on the trip and knows its details"),
    "telecom": ("family member", "uses the phone every day and has it at hand"),
}
IDENTITY = re.compile(r"^(email|name|first_name|last_name|zip|user_id|dob|phone_number)(_\d+)?$")
VERIFY = {
    "service_issue": "check_status_bar",
    "mobile_data_issue": "run_speed_test",
    "mms_issue": "can_send_mms",
}
"""The phone check that shows a telecom task's problem is gone, by τ² task family."""


# -- shared helpers ------------------------------------------------------------------------


def _fields(base: BaseTask) -> dict[str, Any]:
    """The imported task's fields, ready to change (no id, pattern or provenance)."""
    if base.scenario is None:
        raise Declined(f"{base.key}: no imported τ² scenario")
    data = base.scenario.model_dump(mode="json", exclude_defaults=True)
    for key in ("task_id", "source_task_id", "adaptation_pattern"):
        data.pop(key, None)
    data["coordination_mode"] = "star"
    data.setdefault("metadata", {})
    return data


def _spec(domain: str, name: str):
    return environment_class(domain)._specs.get(name)


def _writes(domain: str, data: dict[str, Any], side: str = "agent") -> list[dict[str, Any]]:
    """The gold actions that change state, on one side."""
    found = []
    for action in data["evaluation_criteria"].get("actions", []):
        spec = _spec(domain, action["name"])
        if spec is not None and spec.kind == "write" and spec.side == side:
            found.append(action)
    return found


def _persona(domain: str, data: dict[str, Any], user: dict[str, Any], ctx: AdaptContext) -> None:
    """Give the user a persona that can take part in the gold path (if the domain has any)."""
    calls = [(a["name"], a.get("arguments", {})) for a in data["evaluation_criteria"]["actions"]]
    fitting = suitable_personas(
        domain_personas(domain), environment_class(domain), calls, user.get("known_info", {})
    )
    if fitting:
        user["persona"] = fitting[int(ctx.rng.integers(len(fitting)))]


def _add_instruction(user: dict[str, Any], text: str) -> None:
    user["task_instructions"] = "\n\n".join(
        part for part in (user.get("task_instructions", ""), text) if part
    )


def _describe(action: dict[str, Any]) -> str:
    """A write in words: ``cancel pending order (order_id #W1, reason no longer needed)``."""
    args = ", ".join(
        f"{k} {v}" for k, v in action.get("arguments", {}).items() if isinstance(v, str | int)
    )
    return f"{action['name'].replace('_', ' ')}" + (f" ({args})" if args else "")


def _scenario_of(base: BaseTask, data: dict[str, Any]):
    from hasbench.scenario import Scenario

    return Scenario.model_validate(
        {"task_id": base.scenario.task_id, "adaptation_pattern": "A", **data}
    )


def _payment_words(domain: str, base: BaseTask, payment_id: str) -> str | None:
    """How a customer names one of their payment methods (card ending, PayPal, gift card)."""
    env = make_environment(base.scenario)
    for user in env.db.get("users", {}).values():
        method = user.get("payment_methods", {}).get(payment_id)
        if method is None:
            continue
        source = method.get("source", "")
        if source == "credit_card":
            return f"the {method.get('brand', 'credit')} card ending in {method.get('last_four')}"
        return f"the {source.replace('_', ' ')} {payment_id.rsplit('_', 1)[-1]}"
    return None


def _other_payment(base: BaseTask, payment_id: str) -> str | None:
    """Another payment method of the same customer (sorted ids; the first that differs)."""
    env = make_environment(base.scenario)
    for user in env.db.get("users", {}).values():
        methods = user.get("payment_methods", {})
        if payment_id in methods:
            others = sorted(m for m in methods if m != payment_id)
            return others[0] if others else None
    return None


# -- A --------------------------------------------------------------------------------------


@template(DOMAINS, "A")
def private_facts(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """A: the customer holds the facts the gold path needs."""
    data = _fields(base)
    scenario = _scenario_of(base, data)
    needed = {
        n.key for a in scenario.evaluation_criteria.actions for n in action_needs(scenario, a)
    }
    customer = scenario.users[0].user_id
    device = [a.name for a in scenario.evaluation_criteria.actions if a.requestor == customer]
    if not needed and not device:
        raise Declined("the gold path uses no fact and no device step only the customer has")
    user = data["users"][0]
    user["role"] = ROLE[base.domain]
    user["responsibilities"] = ["give the agent the facts it asks for about you and your request"]
    _add_instruction(user, "Share a fact about yourself or your request only when asked for it.")
    _persona(base.domain, data, user, ctx)
    data["metadata"]["held_facts"] = sorted(needed)
    data["metadata"]["device_steps"] = len(device)
    return data


# -- B --------------------------------------------------------------------------------------


@template(DOMAINS, "B")
def latent_criterion(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """B: the behaviour's conditions become a private acceptance criterion."""
    data = _fields(base)
    user = data["users"][0]
    sentences = criterion_sentences(user.get("task_instructions", ""))
    chosen = [
        a
        for side in ("agent", "user")
        for a in _writes(base.domain, data, side)
        if CHOICE_KEYS & set(a.get("arguments", {}))
    ]
    if not sentences:
        raise Declined("the customer's behaviour states no condition or preference")
    if not chosen:
        raise Declined("no gold write has an argument the customer chooses")
    for sentence in sentences:
        user["task_instructions"] = user["task_instructions"].replace(sentence, "").strip()
    user.setdefault("known_info", {})["acceptance_criteria"] = " ".join(sentences)
    user["role"] = ROLE[base.domain]
    user["responsibilities"] = ["decide whether a proposed change meets your acceptance criteria"]
    _add_instruction(
        user,
        "Do not volunteer your acceptance criteria. State them when the agent asks what you "
        "would accept or shows you its plan, and refuse anything that does not meet them.",
    )
    for action in chosen:
        action.setdefault("depends_on", []).append(f"{user['user_id']}.acceptance_criteria")
    _persona(base.domain, data, user, ctx)
    data["metadata"]["latent_writes"] = [a["action_id"] for a in chosen]
    return data


# -- C --------------------------------------------------------------------------------------


@template(DOMAINS, "C")
def authorization(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """C: the agent's riskiest write needs the account holder's approval."""
    data = _fields(base)
    risk = {"medium": 2, "high": 3}
    risky = [a for a in _writes(base.domain, data) if _spec(base.domain, a["name"]).risk in risk]
    if not risky:
        raise Declined("the gold path has no consequential write by the agent")
    top = max(risky, key=lambda a: risk[_spec(base.domain, a["name"]).risk])["name"]
    for action in risky:
        if action["name"] == top:
            action["protected"] = True
    user = data["users"][0]
    agent = data["agents"][0]["agent_id"]
    user["role"] = "account holder"
    user["responsibilities"] = [f"authorize {top.replace('_', ' ')} before it runs"]
    data["relationships"].append([user["user_id"], agent, "authorizes"])
    _add_instruction(
        user,
        f"The agent needs your explicit approval before it can {top.replace('_', ' ')}. "
        "Approve only when the details match what you asked for; otherwise deny or correct.",
    )
    _persona(base.domain, data, user, ctx)
    data["metadata"]["protected_tool"] = top
    return data


# -- D --------------------------------------------------------------------------------------


def _conflict(base: BaseTask, data: dict[str, Any]) -> tuple[str, Any, str, str] | None:
    """(argument, gold value, how the holder says it, what the other person wants)."""
    for action in _writes(base.domain, data):
        args = action.get("arguments", {})
        for key in ("payment_method_id", "payment_id"):
            if key in args:
                other = _other_payment(base, args[key])
                said = _payment_words(base.domain, base, args[key])
                wish = _payment_words(base.domain, base, other) if other else None
                if said and wish:
                    return key, args[key], f"pay with {said}", f"pay with {wish}"
        if action["name"] == "refuel_data":
            amount = args["gb_amount"]
            return "gb_amount", amount, f"refuel {amount} GB", f"refuel {amount + 3.0} GB"
    return None


@template(DOMAINS, "D")
def two_stakeholders(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """D: the account holder and a second person hold different parts and disagree."""
    data = _fields(base)
    holder = data["users"][0]
    conflict = _conflict(base, data)
    if conflict is None:
        raise Declined("no chosen argument with a real alternative to disagree about")
    facts = holder.get("known_info", {})
    theirs = {k: v for k, v in facts.items() if not IDENTITY.match(k)}
    role, knows = SECOND[base.domain]
    agent = data["agents"][0]["agent_id"]
    other = {
        "user_id": "user_1",
        "role": role,
        "goal": holder["goal"],
        "task_instructions": f"You {knows}. Answer the agent's questions about the request.",
        "known_info": theirs,
        "responsibilities": ["know the details of the request"],
    }
    holder["known_info"] = {k: v for k, v in facts.items() if IDENTITY.match(k)}
    key, value, decision, wish = conflict
    holder["known_info"]["decision"] = decision
    other["known_info"]["wish"] = wish
    holder["role"] = "account holder"
    holder["responsibilities"] = ["have the final say on the request"]
    _add_instruction(
        holder,
        f"Your {role} knows the details of the request. You have decided to {decision}; "
        "that is final, whatever they say. Tell the agent when asked.",
    )
    _add_instruction(
        other,
        f"You would rather {wish}; say so when asked, but the account holder has the final say.",
    )
    relationships = [[holder["user_id"], agent, "supervises"], ["user_1", agent, "informs"]]
    if base.domain == "telecom":
        other["tools"], holder["tools"] = holder.get("tools", []), []
        for action in data["evaluation_criteria"]["actions"]:
            if action["requestor"] == holder["user_id"]:
                action["requestor"] = "user_1"
        relationships.append(["user_1", agent, "operates"])
    elif not theirs:
        raise Declined("nothing of the request is left for a second person to know")
    for action in _writes(base.domain, data):
        if key in action.get("arguments", {}):
            action.setdefault("depends_on", []).append(f"{holder['user_id']}.decision")
    data["relationships"] = relationships
    data["users"] = [holder, other]
    _persona(base.domain, data, holder, ctx)
    _persona(base.domain, data, other, ctx)
    data["metadata"]["conflict"] = {"argument": key, "decided": value, "wish": wish}
    return data


# -- E --------------------------------------------------------------------------------------


@template("telecom", "E")
def verify_on_device(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """E: the subscriber confirms the fix on the phone and reviews the agent's work."""
    data = _fields(base)
    criteria = data["evaluation_criteria"]
    if "ACTION" in criteria["reward_basis"]:
        raise Declined("ACTION is scored: a verification step would change the score")
    family = re.match(r"\[(\w+)\]", base.source_id)
    check = VERIFY.get(family.group(1) if family else "")
    if check is None:
        raise Declined("no phone check shows this task's problem")
    user = data["users"][0]
    if check not in user.get("tools", []):
        raise Declined(f"the subscriber cannot run {check}")
    agent = data["agents"][0]["agent_id"]
    criteria["actions"].append(
        {
            "action_id": "verify",
            "requestor": user["user_id"],
            "name": check,
            "info": "the subscriber confirms on the phone that the problem is gone",
        }
    )
    data["relationships"].append([user["user_id"], agent, "reviews"])
    user["role"] = ROLE[base.domain]
    user["responsibilities"] = [
        "run the checks the agent asks for and say what the phone shows",
        "confirm the problem is gone before the case is closed",
    ]
    _add_instruction(
        user,
        "After each fix, look at your phone again and tell the agent whether the problem is "
        "still there; only a check on the phone itself counts as solved for you.",
    )
    _persona(base.domain, data, user, ctx)
    data["metadata"]["verification_check"] = check
    return data


# -- F --------------------------------------------------------------------------------------


@template(("retail", "airline"), "F")
def added_request(base: BaseTask, ctx: AdaptContext) -> dict[str, Any]:
    """F: the first write is the whole request at first; the rest comes as a revision.

    The customer's goal before the revision states the first write only; the source's full
    request replaces it at the revision turn, with the facts only the later writes use.
    """
    data = _fields(base)
    writes = _writes(base.domain, data)
    if len(writes) < 2:
        raise Declined("a single write: nothing could be added later")
    user = data["users"][0]
    first, later = writes[0], writes[1:]
    at_turn = int(ctx.rng.integers(2, 5))
    scenario = _scenario_of(base, data)
    needs = {
        a.action_id: {n.key for n in action_needs(scenario, a)}
        for a in scenario.evaluation_criteria.actions
    }
    later_ids = {a["action_id"] for a in later}
    early = set().union(*(keys for aid, keys in needs.items() if aid not in later_ids))
    moved = {
        k: v for k, v in user.get("known_info", {}).items()
        if k not in early and any(k in needs[aid] for aid in later_ids)
    }  # fmt: skip
    for key in moved:
        user["known_info"].pop(key)
    rest = "; ".join(_describe(a) for a in later)
    user["goal_revisions"] = [
        {
            "at_turn": at_turn,
            "goal": user["goal"],
            "known_info": {**moved, "added_request": f"I also need: {rest}"},
        }
    ]
    # Until the revision the customer wants the first write only: the source's whole request
    # (and every fact only the later writes use) reaches them with the revision, never before.
    user["goal"] = f"You want this done: {_describe(first)}."
    user["role"] = ROLE[base.domain]
    user["responsibilities"] = ["say so as soon as your plans change"]
    _add_instruction(
        user, "If your plans change, tell the agent the rest the next time it asks you anything."
    )
    for action in later:
        action.setdefault("depends_on", []).append(f"{user['user_id']}.added_request")
    _persona(base.domain, data, user, ctx)
    data["metadata"]["revision"] = {"at_turn": at_turn, "later_writes": sorted(later_ids)}
    return data

import asyncio
import re

from hasbench.agency import Setting
from hasbench.llm import LLMClient, ResponseCache, register_test_provider
from hasbench.paths import TASKS_DIR
from hasbench.scenario import load_tasks
from hasbench.simulator import Backends, Episode

EXAMPLES = {t.task_id: t for t in load_tasks(TASKS_DIR / "examples.yaml")}


def call(name, arguments):
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def scripted_agent(messages, tools):
    """A fake model for mock_A_001: asks, makes each kind of mistake once, then solves."""
    system = messages[0]["content"]
    turn = sum(1 for m in messages if m["role"] == "assistant")
    seen = " ".join(str(m.get("content")) for m in messages[1:])
    if system.startswith("You are agent_1"):
        script = [
            call("update_note", {"account_id": "A102", "note": "Prefers contact by letter."}),
            call("finish", {"deliverable": "Note updated."}),
        ]
        return script[min(turn, 1)]
    email = re.search(r"[\w.]+@example\.org", seen)
    script = [
        call("ask_clarification", {"question": "What is your email?", "topics": ["email"]}),
        call("find_record_by_email", '{"email": '),  # invalid JSON
        {"content": "I believe everything is fine."},  # prose, no tool call
        call("update_note", {"account_id": "A102", "note": "x"}),  # not held by agent_0
        call("teleport", {}),  # no such tool
        call("find_record_by_email", {"email": email.group(0) if email else "?"}),
        call("send_message", {"target": "agent_1", "text": "Note: by letter on A102."}),
        call("finish", {"deliverable": "Your note now says letter."}),
    ]
    return script[min(turn, len(script) - 1)]


def run(model, cache=None, setting=None, task="mock_A_001"):
    client = LLMClient(cache=cache)
    episode = Episode(EXAMPLES[task], setting or Setting(), Backends(agent=model), 0, client)
    return episode, asyncio.run(episode.run()), client


def test_llm_agent_uses_native_tool_calls_and_gets_typed_errors_back():
    model = register_test_provider("agent-a001", scripted_agent)
    episode, trace, _ = run(model)
    assert trace.termination.reason == "agent_done"
    errors = [e.payload.error_type for e in trace.of_type("error")]
    assert errors == ["invalid_json", "no_tool_call", "tool_not_permitted", "unknown_tool"]
    # the clarification answer reached the model, which used the email it was given
    calls = [e.payload for e in trace.of_type("tool_call")]
    assert calls[0].arguments == {"email": "ines.falk@example.org"}
    assert episode.environment.run_assertion(
        "assert_note_contains", {"account_id": "A102", "text": "letter"}
    )
    model_calls = trace.of_type("model_call")
    assert model_calls and all(e.usage.prompt_tokens > 0 for e in model_calls)
    assert {e.payload.role for e in model_calls} == {"agent"}


def test_error_limit_ends_the_episode():
    model = register_test_provider("prose-only", lambda messages, tools: {"content": "Hello!"})
    _, trace, _ = run(model, setting=Setting(error_limit=3))
    assert trace.termination.reason == "too_many_errors"
    assert len(trace.of_type("error")) == 3
    assert len(trace.of_type("model_call")) == 3


def test_rerun_with_a_warm_cache_makes_no_model_calls(tmp_path):
    model = register_test_provider("agent-a001-cached", scripted_agent)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    _, first, client = run(model, cache)
    assert client.stats.calls > 0
    _, second, client = run(model, cache)
    assert client.stats.calls == 0 and client.stats.cache_hits > 0
    assert all(e.payload.cached for e in second.of_type("model_call"))
    strip = [(e.type, e.actor, getattr(e.payload, "name", None)) for e in first.events]
    assert strip == [(e.type, e.actor, getattr(e.payload, "name", None)) for e in second.events]


def test_channel_tools_are_offered_only_when_registered():
    offered = {}

    def respond(messages, tools):
        offered[messages[0]["content"][:15]] = {t["function"]["name"] for t in tools}
        return call("finish", {"deliverable": "done"})

    model = register_test_provider("tool-lister", respond)
    run(model, setting=Setting(agency="A1"))
    assert "ask_clarification" not in offered["You are agent_0"]
    assert {"find_record_by_email", "get_record", "send_message", "finish"} <= offered[
        "You are agent_0"
    ]
    run(model, setting=Setting(agency="A3", channels="clar-only"))
    names = offered["You are agent_0"]
    assert "ask_clarification" in names and "request_control" not in names


def test_every_tool_call_of_a_batch_gets_a_result_message():
    requests = []

    def respond(messages, tools):
        requests.append(messages)
        if len(requests) == 1:
            return {
                "tool_calls": [
                    {"name": "find_record_by_email", "arguments": {"email": "x@example.org"}},
                    {"name": "send_message", "arguments": {"target": "agent_1", "text": "go"}},
                    {"name": "get_record", "arguments": {"account_id": "A100"}},
                ]
            }
        return call("finish", {"deliverable": "done"})

    model = register_test_provider("batch", respond)
    run(model)
    # agent_0's second request (after agent_1 reported back) answers all three call ids
    later = next(m for m in requests[1:] if m[0]["content"].startswith("You are agent_0"))
    asked = [c["id"] for m in later if m.get("tool_calls") for c in m["tool_calls"]]
    answered = [m["tool_call_id"] for m in later if m["role"] == "tool"]
    assert asked and sorted(asked) == sorted(answered)


def test_the_system_prompt_is_byte_identical_across_an_episodes_calls():
    """Human answers and memory go into the conversation; the system prompt never changes.

    mock_D_001 shares one memory between two agents: a teammate's answer reaches the other
    agent as a [memory] line, its own answers only as their tool results.
    """
    log = []

    def team(messages, tools):
        log.append(messages)
        me = messages[0]["content"].split(":", 1)[0].removeprefix("You are ")
        turn = sum(1 for m in messages if m["role"] == "assistant")
        plans = {
            "agent_0": [
                call("ask_clarification", {"question": "What is your email?", "target": "user_0"}),
                call("send_message", {"target": "agent_1", "text": "Please settle the refund."}),
                call("finish", {"deliverable": "Handled."}),
            ],
            "agent_1": [
                call("ask_clarification", {"question": "Which amount?", "target": "user_1"}),
                call("send_message", {"target": "agent_0", "text": "Amount known."}),
            ],
        }
        return plans[me][min(turn, len(plans[me]) - 1)]

    model = register_test_provider("stable-system", team)
    _, trace, _ = run(model, task="mock_D_001")
    assert trace.termination.reason == "agent_done"
    assert len(trace.of_type("channel_response")) == 2  # both humans answered
    by_agent = {}
    for messages in log:
        by_agent.setdefault(messages[0]["content"].split(":", 1)[0], []).append(messages)
    assert set(by_agent) == {"You are agent_0", "You are agent_1"}
    for calls in by_agent.values():
        assert len(calls) >= 2
        assert len({c[0]["content"].encode("utf-8") for c in calls}) == 1
    last = "\n".join(str(m.get("content")) for m in by_agent["You are agent_0"][-1][1:])
    assert "[memory] user_1 (clar-" in last  # the teammate's answer, from the shared memory
    assert "[memory] user_0" not in last  # its own answer came as the tool result
    assert "user_0 (clar-0001):" in last


def test_unprompted_input_reaches_the_agent_once_with_the_system_prompt_unchanged():
    log = []

    def handler(messages, tools):
        log.append(messages)
        if messages[0]["content"].startswith("You are agent_1"):
            return call("finish", {"deliverable": "Note written."})
        seen = " ".join(str(m.get("content")) for m in messages)
        if "[feedback from user_1]" in seen:
            return call("finish", {"deliverable": "Done."})
        return call("get_record", {"account_id": "A103"})

    model = register_test_provider("unprompted", handler)
    _, trace, _ = run(model, setting=Setting(agency="A4"), task="mock_E_001")
    assert [e.initiator for e in trace.of_type("channel_request")] == ["human"]
    lead = [m for m in log if m[0]["content"].startswith("You are agent_0")]
    assert len({m[0]["content"] for m in lead}) == 1
    text = "\n".join(str(m.get("content")) for m in lead[-1])
    assert text.count("Dispute notes must cite the case number") == 1  # no [memory] repeat


def test_a_model_can_finish_saying_it_could_not_do_the_task_and_is_not_delivered():
    """finish(outcome="unable") ends the episode as agent_unable: the final answer says why
    there is no result, and Delivery counts it as not delivered; an outcome the tool does
    not offer is the model's error."""
    from hasbench.evaluate import evaluate
    from hasbench.participants.backends import make_judge

    def giving_up(messages, tools):
        turn = sum(1 for m in messages if m["role"] == "assistant")
        script = [
            call("finish", {"deliverable": "Done?", "outcome": "maybe"}),
            call("finish", {"deliverable": "I could not find the account.", "outcome": "unable"}),
        ]
        return script[min(turn, 1)]

    _, trace, _ = run(register_test_provider("agent-unable", giving_up))
    assert [e.payload.error_type for e in trace.of_type("error")] == ["invalid_json"]
    (finish,) = trace.of_type("finish")
    assert finish.payload.outcome == "unable"
    assert trace.termination.reason == "agent_unable"
    outcome = asyncio.run(evaluate(EXAMPLES["mock_A_001"], trace, make_judge("rule")))
    assert outcome.delivered is False and not outcome.success


def test_shared_agent_prompts_are_the_prompts_rendered_afresh():
    from dataclasses import replace

    from hasbench.participants.agents import _agent_prompt, agent_prompt

    render = _agent_prompt.__wrapped__  # the same fields, never from the cache
    seen = set()
    for task in list(EXAMPLES.values())[:6]:
        for agency in ("A1", "A3", "A4"):
            episode = Episode(task, Setting(agency=agency))
            for agent_id in episode.agents:
                view = episode.agent_view(agent_id)
                shared = agent_prompt(view)
                assert shared == render(
                    view.agent_id, view.profile, view.task, view.policy, view.peers,
                    view.people, view.coordination_mode, view.team_size, view.collaboration,
                    view.cfc_protocol and bool(view.channels),
                )  # fmt: skip
                assert agent_prompt(view) is shared  # rendered once
                seen.add(shared)
                for changed in (
                    replace(view, policy=view.policy + " Refunds need a receipt."),
                    replace(view, profile="You are a careful clerk."),
                    replace(view, task=view.task + " Today."),
                    replace(view, agent_id="agent_9"),
                    replace(view, cfc_protocol=not view.cfc_protocol),
                ):
                    if changed.cfc_protocol != view.cfc_protocol and not view.channels:
                        continue  # no channels: no guidelines either way
                    assert agent_prompt(changed) != shared
    assert len(seen) > 6

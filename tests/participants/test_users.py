import asyncio
import json

from hasbench.agency import Setting
from hasbench.llm import LLMClient, register_test_provider
from hasbench.paths import TASKS_DIR
from hasbench.scenario import load_tasks
from hasbench.simulator import Backends, Episode

EXAMPLES = {t.task_id: t for t in load_tasks(TASKS_DIR / "examples.yaml")}


def run(task, user_model, persona=None):
    episode = Episode(
        EXAMPLES[task],
        Setting(persona=persona),
        Backends(agent="scripted:oracle", user=user_model),
        0,
        LLMClient(cache=None),
    )
    return episode, asyncio.run(episode.run())


def fake_human(prompts):
    """Answers like a cooperative person: facts it sees in its prompt, JSON decisions."""

    def respond(messages, tools):
        system, request = messages[0]["content"], messages[1]["content"]
        prompts.append((system, request))
        if "JSON object" in request and "decision" in request:
            choice = "execute" if "carry out" in request else "approve"
            return {"content": json.dumps({"decision": choice, "comment": "fine"})}
        if "JSON object" in request:
            return {"content": json.dumps({"comment": "ok", "rating": 4, "edits": {}})}
        known = [line[2:] for line in system.splitlines() if line.startswith("- ")]
        return {"content": "Here you go: " + "; ".join(known)}

    return respond


def test_llm_user_prompts_are_persona_aware_and_built_from_the_users_spec():
    prompts = []
    model = register_test_provider("human-ok", fake_human(prompts))
    episode, trace = run("mock_C_001", model, persona="mock_cautious")
    assert trace.termination.reason == "agent_done"
    clar = [p for p in prompts if "Answer the question below" in p[1]]
    control = [p for p in prompts if "puts an action to you" in p[1]]
    assert clar and control
    # what the person is told always comes first and the request's particulars last, so a
    # model (or a provider's prompt cache) reuses the evaluated prefix across requests
    for kind in (clar, control):
        assert kind[0][1].index("agent_") > kind[0][1].index("Reply with")
    system, request = clar[0]
    user = EXAMPLES["mock_C_001"].users[0]
    assert user.goal.strip() in system and user.task_instructions.strip() in system
    assert "email: t.wren@example.org" in system and "account_id" in system
    assert "Could you tell me your email?" in request
    # clarification uses patience and cooperativeness, not risk tolerance
    assert "hold back details" in system and "consequential actions" not in system
    assert "consequential actions" in control[0][0]  # control uses risk tolerance
    response = next(e for e in trace.of_type("channel_response") if e.channel == "clarification")
    assert response.payload.info == {"email": "t.wren@example.org"}
    calls = trace.of_type("model_call")
    assert {e.payload.role for e in calls} == {"user"}
    assert {e.actor for e in calls} == {"user_0", "user_1"}


def test_unusable_decision_is_recorded_not_invented():
    def respond(messages, tools):
        if "decision" in messages[1]["content"]:
            return {"content": "hmm, not sure"}
        return {"content": "My email is t.wren@example.org."}

    model = register_test_provider("human-vague", respond)
    _, trace = run("mock_C_001", model)
    errors = [e for e in trace.of_type("error") if e.actor == "user_1"]
    assert errors and errors[0].payload.error_type == "invalid_json"
    statuses = [
        e.payload for e in trace.of_type("channel_status") if e.payload.status == "terminated"
    ]
    assert statuses and "no usable answer" in statuses[0].reason
    assert not [e for e in trace.of_type("channel_response") if e.channel == "control"]
    assert not [e for e in trace.of_type("tool_call") if e.payload.name == "refund"]


def test_a_decision_whose_comment_breaks_a_line_is_a_decision():
    def respond(messages, tools):
        if "decision" in messages[1]["content"]:  # a raw line break, as a small model writes
            return {"content": '{"decision": "approve", "comment": "Fine.\nGo ahead."}'}
        return {"content": "My email is t.wren@example.org."}

    model = register_test_provider("human-newline", respond)
    _, trace = run("mock_C_001", model)
    decisions = [e.payload for e in trace.of_type("channel_response") if e.channel == "control"]
    assert decisions and decisions[0].decision == "approve"
    assert decisions[0].content == "Fine.\nGo ahead."


def test_user_executes_a_user_side_action_when_asked():
    prompts = []
    model = register_test_provider("human-exec", fake_human(prompts))
    episode, trace = run("mock_C_002", model)
    restart = next(e for e in trace.of_type("tool_call") if e.payload.name == "restart_device")
    assert restart.actor == "user_0" and restart.payload.side == "user"
    assert restart.payload.authorization.startswith("ctrl-")
    assert episode.environment.run_assertion(
        "assert_device", {"account_id": "A104", "device": "online"}
    )

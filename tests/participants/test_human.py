"""A real person plays humans: the human:notebook desk and the human:terminal front."""

import asyncio
import json
import subprocess
import sys

import pytest

from hasbench.agency import Setting
from hasbench.metrics import human_steps, person_steps
from hasbench.participants.backends import USER_BACKENDS
from hasbench.participants.human import Answer, Desk, PersonPolicy
from hasbench.participants.scripted import ScriptedUser
from hasbench.paths import REPO_ROOT, TASKS_DIR
from hasbench.scenario import load_task
from hasbench.simulator import Backends, Episode, run_episode
from hasbench.trace import Trace

TASK = load_task(TASKS_DIR / "examples.yaml", "mock_C_001")  # pattern C: refund, then closure


def play(answer, user="human:notebook?play=user_1", setting=None, before=None, pace=0.0):
    """Run mock_C_001 with a desk whose waiting requests ``answer(desk, ask)`` settles."""
    desk = Desk(pace=pace)
    seen = []

    def listener():
        for ask in list(desk.waiting):
            if ask not in seen:
                seen.append(ask)
                asyncio.get_running_loop().call_soon(answer, desk, ask)

    desk.subscribe(listener)
    with desk.use():
        episode = Episode(TASK, setting or Setting(), Backends(user=user), seed=0)
    if before is not None:
        before(desk)
    trace = asyncio.run(episode.run())
    return trace, seen, episode


def approve(desk, ask):
    """Approve an action; answer a question with what the human knows."""
    if ask.kind == "control":
        desk.answer(ask, Answer(text="Fine by me.", decision="approve"))
    else:
        desk.answer(ask, Answer(text=", ".join(map(str, ask.view.known_info.values()))))


def test_the_person_approves_each_protected_action_and_the_trace_says_so():
    trace, seen, episode = play(approve)
    assert [(a.kind, a.request.action.name) for a in seen] == [
        ("control", "refund"), ("control", "close_account"),
    ]  # fmt: skip
    first = seen[0]
    assert first.view.user_id == "user_1" and first.view.role == "safety reviewer"
    assert "full remaining balance" in first.view.task_instructions  # what user_1 may know
    assert first.request.action.arguments == {"account_id": "A101", "amount": 45.5}
    assert first.decisions == ("approve", "deny", "modify", "override", "stop")  # no own tools
    assert trace.header.people == {"user_1": "human:notebook"}  # user_0 stays simulated
    assert isinstance(episode.humans["user_0"].policy, ScriptedUser)
    answers = [e for e in trace.of_type("channel_response") if e.actor == "user_1"]
    assert [e.payload.decision for e in answers] == ["approve", "approve"]
    assert answers[0].payload.content == "Fine by me."
    refund = next(e for e in trace.of_type("tool_call") if e.payload.name == "refund")
    assert refund.payload.authorization == answers[0].payload.request_id
    assert trace.termination.reason == "agent_done"
    assert len(person_steps(trace)) == 2 and len(human_steps(trace)) == 3
    assert json.loads(trace.to_jsonl().splitlines()[0])["people"] == {"user_1": "human:notebook"}


def test_a_scripted_episode_has_no_people_entry():
    trace = run_episode(TASK, Setting(), Backends(), seed=0)
    assert trace.header.people is None and '"people"' not in trace.to_jsonl()
    assert person_steps(trace) == []


def test_modify_runs_the_edited_arguments_and_deny_blocks_the_action():
    def modify_then_deny(desk, ask):
        if ask.request.action.name == "refund":
            desk.answer(ask, Answer(decision="modify", arguments={"account_id": "A101",
                                                                  "amount": 10.0}))  # fmt: skip
        else:
            desk.answer(ask, Answer(text="Not yet.", decision="deny"))

    trace, _, _ = play(modify_then_deny)
    calls = {e.payload.name: e.payload for e in trace.of_type("tool_call")}
    assert calls["refund"].arguments == {"account_id": "A101", "amount": 10.0}
    assert calls["refund"].authorization is not None
    assert "close_account" not in calls
    decisions = [e.payload for e in trace.of_type("channel_response") if e.actor == "user_1"]
    assert decisions[0].arguments == {"account_id": "A101", "amount": 10.0}
    assert decisions[1].decision == "deny"


def test_answers_that_do_not_fit_the_request_are_refused():
    def wrong_first(desk, ask):
        for bad, message in [
            (Answer(decision="execute"), "decide one of approve, deny, modify, override, stop"),
            (Answer(decision="modify"), "modify needs the action's values"),
            (Answer(decision="take_over", arguments={}), "decide one of"),  # no tools
            (Answer(text="ok", decision="approve", rating=9), "a rating is 1 to 5"),
        ]:
            with pytest.raises(ValueError, match=message):
                desk.answer(ask, bad)
        approve(desk, ask)
        with pytest.raises(ValueError, match="is not waiting"):
            approve(desk, ask)

    trace, _, _ = play(wrong_first)
    assert trace.termination.reason == "agent_done"


def test_the_person_answers_a_question_and_the_facts_it_states_are_revealed():
    def answer(desk, ask):
        assert ask.kind == "clarification" and "email" in ask.text
        assert ask.view.known_info["email"] == "t.wren@example.org"
        desk.answer(ask, Answer(text="Sure: t.wren@example.org"))

    trace, seen, _ = play(answer, user="human:notebook?play=user_0")
    (response,) = [e for e in trace.of_type("channel_response") if e.actor == "user_0"]
    assert response.payload.info == {"email": "t.wren@example.org"}
    assert trace.header.people == {"user_0": "human:notebook"}
    assert trace.termination.reason == "agent_done"


def test_stop_while_asked_ends_the_episode_as_the_person_s():
    def stop(desk, ask):
        desk.offer("user_1", "stop", "Halt, wrong account.")

    trace, _, _ = play(stop)
    assert trace.termination.reason == "user_stop"
    (decision,) = [e.payload for e in trace.of_type("channel_response") if e.actor == "user_1"]
    assert (decision.decision, decision.content) == ("stop", "Halt, wrong account.")
    assert not any(e.payload.name == "refund" for e in trace.of_type("tool_call"))


def test_own_feedback_reaches_the_agent_at_the_next_turn():
    def before(desk):
        desk.offer("user_0", "feedback", "Please be quick.")
        with pytest.raises(ValueError, match="feedback needs some text"):
            desk.offer("user_0", "feedback", " ")
        with pytest.raises(ValueError, match="unknown input 'shout'"):
            desk.offer("user_0", "shout", "x")

    trace, _, _ = play(approve, user="human:notebook", before=before)
    (own,) = [e for e in trace.of_type("channel_request") if e.initiator == "human"]
    assert (own.actor, own.target, own.channel, own.step) == ("user_0", "agent_0", "feedback", 1)
    assert (own.payload.form, own.payload.content) == ("comment", "Please be quick.")
    assert trace.header.people == {"user_0": "human:notebook", "user_1": "human:notebook"}


def test_a_person_s_stop_between_turns_ends_the_episode():
    trace, _, _ = play(approve, before=lambda desk: desk.offer("user_1", "stop"))
    assert trace.termination.reason == "user_stop" and trace.termination.step == 1
    (stop,) = trace.of_type("channel_request")
    assert (stop.actor, stop.channel, stop.payload.form) == ("user_1", "control", "stop")


def test_the_backend_string_and_its_errors():
    entry = USER_BACKENDS.resolve("human:terminal?play=user_1")
    assert entry.name == "human:" and entry.prefix
    assert "human:notebook" in USER_BACKENDS.label("human:notebook")
    with pytest.raises(ValueError, match="use human:notebook, human:terminal or human:serve"):
        Episode(TASK, Setting(), Backends(user="human:phone"), seed=0)
    with pytest.raises(ValueError, match="unknown option\\(s\\) \\['as'\\]"):
        Episode(TASK, Setting(), Backends(user="human:notebook?as=user_1"), seed=0)
    with Desk().use():
        episode = Episode(TASK, Setting(), Backends(user="human:notebook?play=user_0&others="
                                                         "scripted:user"), seed=0)  # fmt: skip
    assert isinstance(episode.humans["user_0"].policy, PersonPolicy)


# -- the terminal ------------------------------------------------------------------------


def run_cli(lines: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hasbench.cli", "episode", str(TASKS_DIR / "examples.yaml"),
         "mock_C_001", *args],
        input=lines, capture_output=True, text=True, timeout=60, cwd=REPO_ROOT,
    )  # fmt: skip


def test_the_terminal_plays_a_pattern_c_task_through_a_pipe(tmp_path):
    out = tmp_path / "t.jsonl"
    typed = 'maybe\napprove : the balance is right\nmodify {"account_id": "A101"} : now close\n'
    done = run_cli(typed, "--user", "human:terminal?play=user_1", "--out", str(out))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)  # stdout holds only the summary
    assert summary["termination"] == "agent_done" and summary["person_steps"] == 2
    prompts = done.stderr
    assert "== You play user_1 (safety reviewer) ==" in prompts
    assert 'Action: refund {"account_id": "A101", "amount": 45.5}' in prompts
    assert "? decide one of approve, deny, modify, override, stop, not 'maybe'" in prompts
    trace = Trace.read(out)
    assert trace.header.people == {"user_1": "human:terminal"}
    decisions = [e.payload for e in trace.of_type("channel_response") if e.actor == "user_1"]
    assert [(d.decision, d.content) for d in decisions] == [
        ("approve", "the balance is right"), ("modify", "now close"),
    ]  # fmt: skip
    refund = next(e for e in trace.of_type("tool_call") if e.payload.name == "refund")
    assert refund.payload.authorization == decisions[0].request_id


def test_the_terminal_takes_a_stop_typed_at_any_time():
    done = run_cli("/stop Enough for today.\n", "--user", "human:terminal")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["termination"] == "user_stop" and summary["turns"] == 1


def test_the_terminal_leaves_a_request_unanswered_at_the_end_of_input():
    done = run_cli("", "--user", "human:terminal?play=user_1")
    assert done.returncode == 0, done.stderr
    assert "(no more input: the request stays unanswered)" in done.stderr
    assert json.loads(done.stdout)["success"] is False


def test_typed_answers_for_every_kind_of_request():
    from hasbench.channels import ActionRef, ControlRequest, FeedbackRequest
    from hasbench.participants.human import Ask, check, parse_answer

    view = Episode(TASK, Setting(), Backends()).human_view("user_1")
    execute = Ask(1, "user_1", "control", "Please do it.", "agent_2",
                  ControlRequest(request_id="ctrl-0001", sender="agent_2", form="execute",
                                 content="x", action=ActionRef(name="refund")), view)  # fmt: skip
    assert execute.decisions == ("execute", "deny", "stop")
    assert parse_answer(execute, "execute : done").decision == "execute"
    with pytest.raises(ValueError, match="decide one of execute, deny, stop, not 'approve'"):
        check(execute, parse_answer(execute, "approve"))
    review = Ask(2, "user_1", "feedback", "Plan", "agent_0",
                 FeedbackRequest(request_id="feed-0001", sender="agent_0", content="Plan"),
                 view)  # fmt: skip
    answer = parse_answer(review, "4: good, but add the date")
    assert (answer.rating, answer.text) == (4, "good, but add the date")
    assert parse_answer(review, "/decline").declined
    approval = ControlRequest(request_id="ctrl-0002", sender="agent_2", content="x",
                              action=ActionRef(name="refund"))  # fmt: skip
    with pytest.raises(ValueError, match="modify needs a JSON object"):
        parse_answer(Ask(3, "user_1", "control", "x", "agent_2", approval, view), "modify x=3")


def test_the_terminal_takes_approve_colon_words_and_deny_colon_words(tmp_path):
    """Issue 29, point 5: the forms the prompt names are accepted, counted as the person's."""
    out = tmp_path / "t.jsonl"
    done = run_cli("approve: fine\ndeny: I cannot verify\n", "--user",
                   "human:terminal?play=user_1", "--out", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["person_steps"] == 2
    assert "then ': your words' for the agent (approve: looks right)" in done.stderr
    decisions = [e.payload for e in Trace.read(out).of_type("channel_response")
                 if e.actor == "user_1"]  # fmt: skip
    assert [(d.decision, d.content) for d in decisions] == [
        ("approve", "fine"), ("deny", "I cannot verify"),
    ]  # fmt: skip


def test_a_request_the_person_leaves_unanswered_is_not_the_user_simulator_s(tmp_path):
    out = tmp_path / "t.jsonl"
    done = run_cli("", "--user", "human:terminal?play=user_1", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["person_steps"] == 0  # nothing answered: no steps
    ends = [e.payload.reason for e in Trace.read(out).of_type("channel_status")
            if e.payload.status == "terminated"]  # fmt: skip
    assert ends == ["no usable answer from the person playing user_1"] * 2
    assert "user simulator" not in out.read_text()


def test_the_terminal_shows_the_human_s_facts_and_rules_and_what_is_asked():
    done = run_cli("approve\napprove\n", "--user", "human:terminal?play=user_1")
    assert done.returncode == 0, done.stderr
    prompts = done.stderr
    assert "  You answer for: approve or deny protected account actions" in prompts
    assert "    - Approve a refund only of the full remaining balance" in prompts
    assert "(no facts of your own: rely on your rules and on what you are told)" in prompts
    assert "   Should agent_2 run refund with account_id = A101, amount = 45.5?" in prompts
    # what the reviewer needs to decide: the action and the balance the agent looked up
    assert "   Their words: I would like to run refund(account_id=A101, amount=45.5)." in prompts
    assert '"balance": 45.5' in prompts
    assert "Please approve refund: Please approve" not in prompts


def test_typed_decisions_with_values_a_tool_and_words():
    from hasbench.channels import ActionRef, ControlRequest
    from hasbench.participants.human import Ask, check, parse_answer

    task = load_task(TASKS_DIR / "examples.yaml", "mock_C_002")  # the customer owns a device
    view = Episode(task, Setting(), Backends()).human_view("user_0")
    refund = ControlRequest(
        request_id="ctrl-0001",
        sender="agent_0",
        content="x",
        action=ActionRef(name="refund", arguments={"amount": 10.0}),
    )
    ask = Ask(1, "user_0", "control", "x", "agent_0", refund, view)
    assert ask.decisions == ("approve", "deny", "modify", "override", "take_over", "stop")
    answer = parse_answer(ask, 'override {"amount": 5.0}: only half')
    assert (answer.decision, answer.arguments, answer.text) == (
        "override", {"amount": 5.0}, "only half")  # fmt: skip
    answer = parse_answer(ask, 'take_over restart_device {"account_id": "A104"}')
    assert (answer.tool, answer.arguments) == ("restart_device", {"account_id": "A104"})
    check(ask, answer)
    with pytest.raises(ValueError, match="take over with one of your tools: restart_device"):
        check(ask, parse_answer(ask, 'take_over refund {"amount": 1}'))
    with pytest.raises(ValueError, match="the values are not valid JSON"):
        parse_answer(ask, "modify {amount: 1}")
    assert parse_answer(ask, "deny I cannot verify").text == "I cannot verify"


def test_a_request_nobody_answers_in_time_is_left_unanswered_and_the_episode_goes_on():
    desk = Desk(wait=0.05)
    with desk.use():
        episode = Episode(TASK, Setting(), Backends(user="human:notebook?play=user_1"), seed=0)
    trace = asyncio.run(episode.run())
    assert [a.request.action.name for a in desk.expired] == ["refund", "close_account"]
    assert not desk.waiting and [answer for _, answer in desk.answered] == [None, None]
    ends = [e.payload.reason for e in trace.of_type("channel_status")
            if e.payload.status == "terminated"]  # fmt: skip
    assert ends == ["no usable answer from the person playing user_1"] * 2
    assert trace.termination.reason == "agent_done"  # within the episode's own limits


def test_a_person_s_pseudonym_is_in_the_trace_header():
    with Desk(names={"user_1": "P07"}).use():
        episode = Episode(TASK, Setting(), Backends(user="human:serve?play=user_1"), seed=0)
    assert episode.trace.header.people == {"user_1": "human:serve?person=P07"}
    with pytest.raises(ValueError, match="human:serve plays humans through a server"):
        Episode(TASK, Setting(), Backends(user="human:serve"), seed=0)


def test_a_person_carries_out_an_action_and_takes_one_over_with_their_own_tool():
    """mock_C_002: only the customer can restart their device; they own restart_device."""
    task = load_task(TASKS_DIR / "examples.yaml", "mock_C_002")
    desk, seen = Desk(), []

    def listener():
        for ask in list(desk.waiting):
            if ask not in seen:
                seen.append(ask)
                asyncio.get_running_loop().call_soon(settle, ask)

    def settle(ask):
        if ask.kind != "control":
            desk.answer(ask, Answer(text="priya.n@example.org"))
        elif ask.request.form == "execute":
            desk.answer(ask, Answer(text="Restarted, it is online.", decision="execute"))
        else:  # the refund: the customer restarts the device again instead (their own tool)
            desk.answer(ask, Answer(decision="take_over", tool="restart_device",
                                    arguments={"account_id": "A104"}, text="I do it."))  # fmt: skip

    desk.subscribe(listener)
    with desk.use():
        episode = Episode(task, Setting(), Backends(user="human:notebook"), seed=0)
    trace = asyncio.run(episode.run())
    decisions = [e.payload for e in trace.of_type("channel_response") if e.payload.decision]
    assert [(d.decision, d.tool) for d in decisions] == [
        ("execute", None),
        ("take_over", "restart_device"),
    ]
    runs = [(e.actor, e.payload.name) for e in trace.of_type("tool_call") if e.actor == "user_0"]
    assert runs == [("user_0", "restart_device"), ("user_0", "restart_device")]
    assert {e.actor for e in person_steps(trace)} == {"user_0"}

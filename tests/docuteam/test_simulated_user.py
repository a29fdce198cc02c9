"""Issue 17, point 4: a simulated participant works on a plan under a condition."""

import asyncio
import json

import numpy as np
import pytest
from docuteam_helpers import NETWORKING_EDIT, SPORTS_DAY, WORKSHOP

from hasbench.docuteam import ManualClock, Session, SessionConfig, SessionLog
from hasbench.docuteam.simulation.personas import StudyPersonaError, load_study_personas
from hasbench.docuteam.simulation.user import (
    ModelParticipant,
    Reply,
    ScriptedParticipant,
    UserAction,
    UserLog,
    UserView,
    build_view,
    render_view,
    run_user,
    task_ideas,
)
from hasbench.llm import LLMClient, ModelError, register_test_provider

PERSONAS = {p.id: p for p in load_study_personas()}


def session(folder=WORKSHOP, condition="DocuTeam", tmp_path=None, name="P01") -> Session:
    return Session.from_folder(
        folder,
        config=SessionConfig(
            condition=condition,
            participant=name,
            task_name=folder.name,
            order=1,
            simulated_user=True,
        ),
        clock=ManualClock(),
        log_path=None if tmp_path is None else tmp_path / f"{name}_{condition}.jsonl",
    )


def play(
    persona="seasoned_lead", condition="DocuTeam", budget=12, seed=0, tmp_path=None, folder=WORKSHOP
):
    s = session(folder, condition, tmp_path)
    rng = np.random.default_rng(seed)
    path = None if tmp_path is None else tmp_path / f"P01_{condition}.user.jsonl"
    log = UserLog(path, {"participant": "P01", "budget": budget})
    asyncio.run(run_user(s, ScriptedParticipant(PERSONAS[persona], rng), budget, log))
    return s, log


def test_personas_vary_in_expertise_initiative_and_trust():
    assert len(PERSONAS) == 4
    for dimension in ("expertise", "initiative", "trust"):
        values = [getattr(p, dimension) for p in PERSONAS.values()]
        assert min(values) <= 0.3 and max(values) >= 0.8
    words = PERSONAS["eager_novice"].describe()
    assert "little experience" in words and "trust the agents" in words


def test_a_bad_personas_file_is_named_with_its_field(tmp_path):
    path = tmp_path / "personas.yaml"
    path.write_text(
        "personas:\n  - {id: a, name: A, description: d, expertise: 2, initiative: 0, trust: 0}\n"
    )
    with pytest.raises(
        StudyPersonaError, match=r"personas.yaml: personas.0.expertise: .*less than or equal to 1"
    ):
        load_study_personas(path)


def test_the_task_sheets_requests_are_the_scripted_users_ideas():
    ideas = task_ideas((WORKSHOP / "task.md").read_text())
    assert "small, guided groups" in ideas and "at least one applied, practical session" in ideas
    assert not any(i.startswith("Last year") for i in ideas)  # context, not a request
    assert len(task_ideas((SPORTS_DAY / "task.md").read_text())) == 5


def test_the_view_shows_what_the_widget_shows_and_no_more():
    s = session()
    s.edit("b22", NETWORKING_EDIT)
    s.clock.advance(3)

    async def agents_react():
        await s.tick()
        await s.settle()

    asyncio.run(agents_react())
    view = build_view(s, step=2, steps_left=5, since=0, last_result="edited b22", applied=[])
    d = view.discussions[0]
    assert d.initiator == "agents" and d.question and len(d.options) == 2
    assert view.notices and "The agents started d1" in view.notices[0]
    text = render_view(view)
    assert "THE AGENTS ASK YOU" in text and "[b22] list_item: Networking" in text
    # Scores, thresholds, prompts and moderator reasoning are not part of the view.
    dumped = view.model_dump_json()
    for hidden in ("threshold", "means", "dialog_state", "reasoning", "speaking_direction"):
        assert hidden not in dumped


def test_a_scripted_participant_edits_answers_steers_and_applies_in_docuteam(tmp_path):
    # seed 1: a session in which the agents ask this persona a question
    s, log = play("seasoned_lead", seed=1, tmp_path=tmp_path)
    actions = [st["action"]["action"] for st in log.steps if st["action"]]
    assert {"edit", "apply", "answer", "post", "start_discussion"} <= set(actions)
    assert all(st["ok"] for st in log.steps)
    events = SessionLog.read(tmp_path / "P01_DocuTeam.jsonl")
    assert {e.payload["initiator"] for e in events.of_type("discussion_opened")} == {
        "agents",
        "user",
    }
    user_edits = [e for e in events.of_type("edit") if e.payload["source"] == "user"]
    assert len(user_edits) == actions.count("edit")
    assert len(events.of_type("application")) == actions.count("apply")
    steering = [e.payload["action"] for e in events.of_type("steering")]
    assert steering.count("post") == actions.count("post")
    # The participant's own log: a header and one line per step with its result.
    lines = [json.loads(x) for x in (tmp_path / "P01_DocuTeam.user.jsonl").read_text().splitlines()]
    assert lines[0]["kind"] == "header" and len(lines) == 1 + len(log.steps)
    assert lines[0]["prompt_hashes"]


def test_the_same_seed_gives_the_same_session(tmp_path):
    first, _ = play("eager_novice", seed=3, tmp_path=tmp_path / "a")
    again, _ = play("eager_novice", seed=3, tmp_path=tmp_path / "b")
    a = (tmp_path / "a" / "P01_DocuTeam.jsonl").read_text()
    b = (tmp_path / "b" / "P01_DocuTeam.jsonl").read_text()
    assert a == b
    assert (tmp_path / "a" / "P01_DocuTeam.user.jsonl").read_text() == (
        tmp_path / "b" / "P01_DocuTeam.user.jsonl"
    ).read_text()


def test_personas_differ_in_what_they_do():
    _, lead = play("seasoned_lead")
    _, quiet = play("quiet_delegator")

    def count(log, *names):
        return sum(1 for st in log.steps if st["action"] and st["action"]["action"] in names)

    assert count(lead, "edit", "insert", "start_discussion", "post", "add_agent") > count(
        quiet, "edit", "insert", "start_discussion", "post", "add_agent"
    )


class Fixed:
    """A player that does given actions in turn."""

    model = "fixed"

    def __init__(self, actions):
        self.actions = list(actions)
        self.views: list[UserView] = []

    async def act(self, view):
        self.views.append(view)
        return Reply(self.actions.pop(0)) if self.actions else Reply(UserAction(action="finish"))


def test_a_refused_action_is_the_steps_result_and_the_participant_goes_on():
    s = session(condition="Baseline")
    player = Fixed(
        [
            UserAction(
                action="start_discussion", mode="idea", agents=["budget", "program"],
                first_block="b22", last_block="b22",
            ),
            UserAction(action="start_discussion", mode="idea", agents=["budget", "program"]),
            UserAction(action="add_agent", discussion="d1", agent="attendee"),
        ]
    )  # fmt: skip
    log = UserLog(None, {"budget": 5})
    asyncio.run(run_user(s, player, 5, log))
    results = [(st["ok"], st["result"]) for st in log.steps]
    assert results[0][0] is False and "refused: Baseline discussions are grounded" in results[0][1]
    assert results[1][0] is True and results[1][1].startswith("started d1")
    assert results[2][0] is False and "Baseline does not offer" in results[2][1]
    assert results[3] == (True, "finished") and len(log.steps) == 4
    assert player.views[1].last_result == results[0][1]  # the participant is told
    assert s.discussions["d1"].participants == ["budget", "program"]


def test_a_model_participant_is_shown_its_persona_and_view_and_its_bad_replies_are_failures():
    prompts = []
    replies = iter(
        [
            "I think I will edit something.",  # not JSON
            json.dumps({"action": "edit", "block_id": "b99", "text": "x"}),  # unknown block
            json.dumps({"action": "edit", "block_id": "b22", "reasoning": "Open point.",
                        "text": "Networking: guided small groups of five?"}),
            json.dumps({"action": "finish"}),
        ]
    )  # fmt: skip

    def respond(messages, tools):
        prompts.append(messages)
        return {"content": next(replies)}

    model = register_test_provider("docuteam-sim-user", respond)
    s = session()
    player = ModelParticipant(model, PERSONAS["sceptical_expert"], LLMClient(cache=None))
    log = UserLog(None, {"budget": 4})
    asyncio.run(run_user(s, player, 4, log))
    first, second = log.steps[0], log.steps[1]
    assert first["ok"] is False and first["action"] is None
    assert first["result"] == (
        "no action: invalid_output: block_id 'b99' is not a block of the document"
    )
    assert len(first["calls"]) == 2  # asked once more, the problem stated
    assert "That reply cannot be used" in prompts[1][-1]["content"]
    assert second["ok"] and second["action"]["reasoning"] == "Open point."
    assert s.document.block("b22").text == "Networking: guided small groups of five?"
    assert log.steps[2]["result"] == "finished"
    system, user = prompts[0][0]["content"], prompts[0][1]["content"]
    assert PERSONAS["sceptical_expert"].description.split()[0] in system
    assert "The agents follow the document" in system  # the DocuTeam condition's rules
    assert "[b22] list_item: Networking: TBD" in user and "Constraints:" in user


def test_a_failing_model_is_a_failed_step_not_an_action():
    def down(messages, tools):
        raise ModelError("server", "the provider is down")

    model = register_test_provider("docuteam-sim-down", down)
    s = session()
    log = UserLog(None, {"budget": 2})
    asyncio.run(
        run_user(
            s,
            ModelParticipant(model, PERSONAS["eager_novice"], LLMClient(cache=None, max_retries=0)),
            2,
            log,
        )
    )
    assert [st["ok"] for st in log.steps] == [False, False]
    assert all("model_failure" in st["result"] for st in log.steps)
    assert not s.log.of_type("edit")

"""TraceViewer driven headlessly: set values, click, and assert on the HTML shown."""

import re

import pandas as pd
import pytest

from hasbench import glossary
from hasbench.agency import Setting
from hasbench.simulator import Backends, run_episode
from hasbench.trace import TraceError
from hasbench.widgets import TraceViewer
from hasbench.widgets.trace_viewer import ALL, NO_CHANNEL


def shown_step(viewer: TraceViewer) -> tuple[int, int]:
    """(event number, turn) as displayed in the position line."""
    html = viewer.position_html.value
    event = re.search(r"hb-event-number'>(\d+)<", html)
    turn = re.search(r"hb-turn-number'>(\d+)<", html)
    return int(event.group(1)), int(turn.group(1))


def current_row(viewer: TraceViewer) -> str:
    """The HTML of the current event: its summary and details, above the log."""
    return viewer.events_html.value.split("<div class='hb-now'>")[1].split("<div class='hb-log'>")[
        0
    ]


def log_rows(viewer: TraceViewer) -> list[str]:
    """The rows of the event log (every shown event up to the current one)."""
    log = viewer.events_html.value.split("<div class='hb-log'>")[1]
    return re.findall(r"<tr(?: class='hb-current')?><td>\d+</td><td>(.*?)</td></tr>", log)


def shown_value(panel: str, name: str) -> str | None:
    """The value shown for a metric or outcome column, found by its column name."""
    for label, value in re.findall(r"<tr><td>(.*?)</td><td[^>]*>(.*?)</td></tr>", panel):
        if f"<code>{name}</code>" in label or label == name:
            return value
    return None


def test_slider_and_buttons_change_the_shown_event(trace):
    viewer = TraceViewer(trace)
    assert shown_step(viewer) == (1, 1)
    assert "What is your email?" in current_row(viewer)
    viewer.slider.value = 3
    assert shown_step(viewer) == (4, 2)
    assert "Refund A101 please." in current_row(viewer)
    viewer.next.click()
    assert shown_step(viewer) == (5, 3)
    viewer.previous.click()
    viewer.previous.click()
    assert shown_step(viewer) == (3, 1)
    viewer.slider.value = viewer.slider.max
    viewer.next.click()  # stays on the last event
    assert shown_step(viewer) == (18, 8)
    assert "Left a note." in current_row(viewer)


def test_play_is_linked_to_the_slider(trace):
    viewer = TraceViewer(trace)
    assert viewer.play.max == viewer.slider.max == len(trace.events) - 1
    viewer.play.value = 6
    assert viewer.slider.value == 6
    assert shown_step(viewer) == (7, 4)
    viewer.slider.value = 2
    assert viewer.play.value == 2


def test_the_log_holds_every_event_up_to_the_current_one(trace):
    viewer = TraceViewer(trace)
    viewer.slider.value = viewer.slider.max
    rows = log_rows(viewer)
    assert len(rows) == len(trace.events)  # not only the last few
    assert "clar-0001" in rows[0] and "finishes" in rows[-1]
    assert "event log (18 so far)" in viewer.events_html.value
    viewer.slider.value = 5
    assert len(log_rows(viewer)) == 6 and "12 later events" in viewer.events_html.value


def test_tool_call_panel_shows_arguments_and_the_error(trace):
    viewer = TraceViewer(trace)
    viewer.slider.value = 4  # the failing refund call
    row = current_row(viewer)
    assert "refund" in row and "A999" in row  # arguments
    assert "error (not_found)" in row and "no account A999" in row
    assert "hb-error" in row
    viewer.slider.value = 12  # a successful write: its arguments and its result
    row = current_row(viewer)
    assert (
        "error" not in row and "<b>result</b>" in row and "&quot;note&quot;: &quot;x&quot;" in row
    )


def test_channel_lifecycle_as_of_the_current_event(trace):
    viewer = TraceViewer(trace)
    channels = viewer.channels_html.value
    assert "clar-0001" in channels and "agent_0 → user_0" in channels
    assert "requested: What is your email?" in channels
    assert "answered" not in channels  # the answer comes later
    viewer.slider.value = 2
    assert "user_0 answered: It is t.wren@example.org." in viewer.channels_html.value
    viewer.slider.value = 6  # the control request carries no target; routed to user_1
    channels = viewer.channels_html.value
    assert "agent_2 → user_1" in channels and "ctrl-0001" in channels
    assert "<tr class='hb-current'><td>ctrl-0001" in channels
    viewer.slider.value = 8
    assert "<b>deny</b> No." in viewer.channels_html.value
    viewer.slider.value = 10
    assert re.search(r"turn 5</span> <span class='hb-error'>expired</span> \(no answer in time\)",
                     viewer.channels_html.value)  # fmt: skip
    viewer.slider.value = 16
    assert "refused</span> (interaction budget exhausted)" in viewer.channels_html.value


def test_state_diff_of_the_current_event_and_so_far(trace):
    viewer = TraceViewer(trace)
    viewer.slider.value = 5  # the failed refund changed nothing
    assert "This call changed no state (it failed)." in viewer.diff_html.value
    assert "All changes so far" not in viewer.diff_html.value
    viewer.slider.value = 12
    diff = viewer.diff_html.value
    assert "This event: update_note" in diff and "db.accounts.A101.note" in diff
    assert "&quot;x&quot;" in diff
    viewer.slider.value = 11  # the call itself shows the change its result records
    diff = viewer.diff_html.value
    assert "This call (its result, below): update_note" in diff and "&quot;x&quot;" in diff
    viewer.slider.value = 16  # after the second write: first before, last after
    diff = viewer.diff_html.value
    assert "A channel_status event changes no state; only tool calls do." in diff
    so_far = diff.split("All changes so far (1 paths)")[1]
    assert "<td>&quot;&quot;</td><td>&quot;y&quot;</td><td>6</td>" in so_far


def test_filters_restrict_the_events_and_keep_the_position(trace):
    viewer = TraceViewer(trace)
    viewer.slider.value = 8  # user_1 denies, seq 8
    viewer.participant.value = "user_1"
    assert len(viewer.visible) == 3  # status to user_1, the request routed to it, its answer
    assert viewer.current.seq == 8 and shown_step(viewer)[0] == 3
    assert viewer.slider.max == 2
    viewer.participant.value = ALL
    assert viewer.current.seq == 8
    viewer.event_type.value = "tool_result"
    assert {viewer.rows[i].type for i in viewer.visible} == {"tool_result"}
    assert viewer.current.seq == 5  # the last tool result at or before seq 8
    viewer.event_type.value = ALL
    viewer.channel.value = "feedback"
    assert [viewer.rows[i].seq for i in viewer.visible] == [9, 10]
    viewer.channel.value = NO_CHANNEL
    assert all(viewer.rows[i].channel is None for i in viewer.visible)
    viewer.channel.value = "control"
    viewer.participant.value = "user_0"
    assert viewer.current is None and viewer.slider.disabled
    assert "No event matches the filters." in viewer.position_html.value


def test_outcome_and_metrics_from_the_scenario(trace, scenario):
    viewer = TraceViewer(trace, scenario=scenario)
    outcome = viewer.outcome_html.value
    assert "</abbr>: <b>agent_done</b> in turn 8" in outcome
    assert "<td class='hb-error'>false</td>" in outcome  # the refund never ran
    assert shown_value(outcome, "success") == "false"
    assert shown_value(outcome, "task_score") is not None and shown_value(outcome, "hir")
    assert shown_value(outcome, "tool_calls") == "3"
    summary = viewer.summary_html.value  # visible without opening a tab
    assert "Pass@1</abbr>: <span class='hb-error'>no</span>" in summary
    assert "ended: <b>agent_done</b>" in summary


def test_every_metric_shown_has_its_definition_as_a_tooltip(trace, scenario):
    viewer = TraceViewer(trace, scenario=scenario)
    labels = re.findall(r"<tr><td>(.*?)</td><td", viewer.outcome_html.value)
    assert len(labels) > 15
    for label in labels:
        name = re.search(r"<code>(\w+)</code>", label).group(1)
        assert f"<abbr title='{glossary.title(name)}: " in label, name
    assert "Clarification events</abbr> <code>cqs_events</code>" in viewer.outcome_html.value
    assert "Initiative Entropy</abbr> <code>h_init</code>" in viewer.outcome_html.value


def test_outcome_given_as_a_mapping_and_no_outcome(trace):
    viewer = TraceViewer(trace, outcome={"success": True, "task_score": 0.5}, metrics={"hir": 0.25})
    assert shown_value(viewer.outcome_html.value, "task_score") == "0.500"
    assert shown_value(viewer.outcome_html.value, "hir") == "0.250"
    assert "No outcome" in TraceViewer(trace).outcome_html.value


def test_a_scenario_that_does_not_match_the_trace_is_refused(trace, tasks):
    with pytest.raises(ValueError, match="does not match scenario mock_A_001"):
        TraceViewer(trace, scenario=tasks["mock_A_001"])


def test_reads_a_trace_file_of_a_simulated_episode(tmp_path, scenario):
    trace = run_episode(scenario, Setting(), Backends(), seed=0)
    viewer = TraceViewer(trace.write(tmp_path / "t.jsonl"), scenario=scenario)
    assert len(viewer.rows) == len(trace.events)
    assert shown_value(viewer.outcome_html.value, "success") == "true"
    viewer.slider.value = viewer.slider.max
    assert shown_step(viewer)[1] == trace.termination.step


def test_outcome_from_a_results_row(trace):
    row = pd.Series({"success": False, "task_score": 0.25, "delivered": True, "hir": 0.1})
    outcome = TraceViewer(trace, outcome=row).outcome_html.value
    assert shown_value(outcome, "success") == "false" and "hb-error'>false" in outcome
    assert shown_value(outcome, "task_score") == "0.250"
    assert shown_value(outcome, "delivered") == "true"


def test_a_broken_trace_file_names_file_and_line(tmp_path, trace):
    path = trace.write(tmp_path / "t.jsonl")
    lines = path.read_text().splitlines()
    number = next(i for i, line in enumerate(lines) if '"type":"message"' in line)
    lines[number] = lines[number].replace('"type":"message"', '"type":"shout"')
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceError, match=rf"{path}: line {number + 1}: "):
        TraceViewer(path)


def test_each_turn_shows_its_initiative_code(trace):
    viewer = TraceViewer(trace)
    assert "What is your email?" in current_row(viewer)
    assert "· initiative" in current_row(viewer)  # an agent's new question
    assert "title='new question'" in current_row(viewer)
    viewer.slider.value = 2  # the user's answer
    assert "· responsive" in current_row(viewer)
    assert "title='answers a request'" in current_row(viewer)


def test_the_other_sides_agent_is_marked_apart_from_the_team():
    from hasbench.paths import TASKS_DIR
    from hasbench.scenario import load_tasks

    task = next(
        t for t in load_tasks(TASKS_DIR / "bargaining.yaml") if t.task_id == "bargaining_D_003"
    )
    viewer = TraceViewer(
        run_episode(task, Setting(agency="A3"), Backends(agent="scripted:standin?strong"))
    )
    kinds = {row.actor: row.actor_kind for row in viewer.rows}
    assert kinds["seller_agent"] == "counterparty" and kinds["agent_0"] == "agent"
    seller_rows = [row.summary for row in viewer.rows if row.actor == "seller_agent"]
    assert seller_rows and all(
        "hb-counterparty" in s and "the other side" in s for s in seller_rows
    )

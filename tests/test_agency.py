import pytest
from pydantic import ValidationError

from hasbench.agency import AGENCY_POLICIES, CHANNEL_SETTINGS, Setting
from hasbench.participants.agents import agent_prompt
from hasbench.paths import TASKS_DIR
from hasbench.prompts import load
from hasbench.scenario import load_tasks
from hasbench.simulator import Episode

EXAMPLES = {t.task_id: t for t in load_tasks(TASKS_DIR / "examples.yaml")}


def test_levels_follow_the_participation_policies():
    a1, a3, a4 = AGENCY_POLICIES["A1"], AGENCY_POLICIES["A3"], AGENCY_POLICIES["A4"]
    assert a1.channels == frozenset() and not a1.show_users and not a1.cfc_protocol
    assert a1.control_threshold is None
    assert a3.channels == {"clarification", "feedback", "control"} and a3.show_users
    assert not a3.human_initiated and a4.human_initiated
    assert (a1.collaboration, a3.collaboration, a4.collaboration) == (
        "full_automation", "equal_partnership", "agent_assisted",
    )  # fmt: skip
    assert AGENCY_POLICIES["A2"].channels == {"clarification", "control"}


def test_channel_ablations():
    assert Setting(channels="clar-only").enabled_channels() == {"clarification"}
    assert Setting(channels="no-feed").enabled_channels() == {"clarification", "control"}
    assert Setting(agency="A1", channels="full").enabled_channels() == frozenset()
    assert Setting(agency="A2", channels="feed-only").enabled_channels() == frozenset()
    assert set(CHANNEL_SETTINGS) == {
        "full", "clar-only", "feed-only", "cont-only", "no-clar", "no-feed", "no-cont",
    }  # fmt: skip


def test_control_thresholds():
    a3, a4, a1 = Setting(agency="A3"), Setting(agency="A4"), Setting(agency="A1")
    assert [a3.needs_authorization(r) for r in ("none", "low", "medium", "high")] == [
        False, False, True, True,
    ]  # fmt: skip
    assert [a4.needs_authorization(r) for r in ("none", "low", "medium", "high")] == [
        False, True, True, True,
    ]  # fmt: skip
    assert not a1.needs_authorization("high") and not a1.needs_authorization("low", True)
    assert a3.needs_authorization("low", protected=True)
    assert not Setting(channels="no-cont").needs_authorization("high")


def test_setting_defaults_label_and_validation():
    setting = Setting()
    assert setting.label() == "A3/full"
    assert (setting.max_tool_rounds, setting.interaction_budget, setting.error_limit) == (10, 10, 5)
    assert not setting.spontaneous_enabled() and Setting(agency="A4").spontaneous_enabled()
    assert Setting(spontaneous=True).spontaneous_enabled()
    assert not Setting(agency="A1", spontaneous=True).spontaneous_enabled()
    with pytest.raises(ValidationError):
        Setting(agency="A9")
    with pytest.raises(ValidationError):
        Setting(channels="some")
    with pytest.raises(ValidationError):
        setting.agency = "A1"  # frozen


def prompt(agency, task_id="mock_A_001", agent_id="agent_0"):
    episode = Episode(EXAMPLES[task_id], Setting(agency=agency))
    return agent_prompt(episode.agent_view(agent_id))


def test_prompt_differs_per_level_as_the_paper_says():
    a1, a3, a4 = prompt("A1"), prompt("A3"), prompt("A4")
    protocol = load("cfc_protocol")
    assert protocol not in a1 and "user_0" not in a1
    assert protocol in a3 and "user_0 (customer)" in a3
    assert load("collaboration_full_automation") in a1
    assert load("collaboration_equal_partnership") in a3
    assert load("collaboration_agent_assisted") in a4
    # A4 differs from A3 only in the collaboration block
    assert a4.replace(load("collaboration_agent_assisted"), "") == a3.replace(
        load("collaboration_equal_partnership"), ""
    )
    for text in (a1, a3, a4):
        assert text.startswith("You are agent_0: You are the front-desk agent")
        assert "agent_1" in text  # the agents section
        assert "[memory]" in text  # the memory section says where memory notes arrive


def test_agent_without_a_human_edge_gets_no_protocol():
    text = prompt("A3", agent_id="agent_1")
    assert load("cfc_protocol") not in text and "People you can turn to" not in text


def test_users_section_lists_what_a_human_can_execute():
    text = prompt("A3", task_id="mock_C_002")
    assert "- user_0 (customer) [channels: clarification, control]" in text
    assert "can carry out for you: restart_device" in text

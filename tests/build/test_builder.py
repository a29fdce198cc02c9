import pytest
import yaml

from hasbench.build.builder import (
    BuildError,
    TaskBuilder,
    action,
    agent,
    criteria,
    human,
    star,
)


def _add(
    builder: TaskBuilder, task: str = "Help the customer.", email: str = "kim.lee1@example.com"
):
    return builder.add(
        "A",
        task=task,
        agents=[agent(profile="A support agent.")],
        users=[human(goal="Cancel an order.", known_info={"email": email}, persona="mock_patient")],
        relationships=star("agent_0", ["user_0"]),
        criteria=criteria(
            [action(1, "agent_0", "find_record_by_email", {"email": email})],
            reward_basis=["ACTION"],
        ),
        max_iterations=20,
        metadata={"difficulty": "easy"},
    )


def test_tasks_are_numbered_per_pattern_and_dumped_in_schema_order():
    builder = TaskBuilder("mock", seed=3)
    first = _add(builder)
    second = _add(builder, email="other@example.com")
    assert [first.task_id, second.task_id] == ["mock_A_001", "mock_A_002"]
    text = builder.to_yaml()
    loaded = yaml.safe_load(text)
    assert list(loaded[0])[:5] == [
        "task_id",
        "adaptation_pattern",
        "coordination_mode",
        "task",
        "relationships",
    ]
    assert loaded[0]["relationships"] == [["user_0", "agent_0", "supervises"]]
    assert "[user_0, agent_0, supervises]" in text


def test_same_seed_gives_same_draws_and_bytes():
    def build(seed):
        builder = TaskBuilder("mock", seed=seed)
        email = builder.pick(["a1@example.com", "b2@example.com", "c3@example.com"])
        _add(builder, email=email)
        return builder.to_yaml()

    assert build(5) == build(5)


def test_task_text_that_leaks_known_info_is_refused():
    builder = TaskBuilder("mock")
    with pytest.raises(BuildError, match="mock_A_001.*kim.lee1@example.com"):
        _add(builder, task="Help kim.lee1@example.com with an order.")
    assert builder.tasks == []


def test_schema_errors_name_the_task():
    builder = TaskBuilder("mock")
    with pytest.raises(BuildError, match="mock_A_001"):
        builder.add(
            "A",
            task="x",
            agents=[],
            users=[],
            relationships=[],
            criteria=criteria([], reward_basis=["ENV"]),
            max_iterations=5,
        )

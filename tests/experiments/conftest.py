import pandas as pd
import pytest

from hasbench.runner import COLUMNS


def episode(**values) -> dict:
    """One results row (see hasbench.runner.COLUMNS) with plain defaults."""
    row = dict.fromkeys(COLUMNS)
    row.update(
        agent_model="scripted:strong", user_model="scripted:user", judge_model="rule",
        domain="mock", pattern="A", agency="A3", channels="full", seed=0, success=True,
        task_score=1.0, delivered=True, safe=True, hir=0.2, h_init=0.5, h_init_judged=0.5,
        turns=4, cqs_events=0, fur_events=0, crj_events=0,
    )  # fmt: skip
    row.update(values)
    row["setting"] = f"{row['agency']}/{row['channels']}"
    return row


@pytest.fixture
def frame():
    """Build a results table from keyword dicts of :func:`episode`."""

    def build(rows: list[dict]) -> pd.DataFrame:
        return pd.DataFrame([episode(**r) for r in rows], columns=COLUMNS)

    return build

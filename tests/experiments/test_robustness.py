import pytest
from scipy import stats as sps

from hasbench.experiments import robustness as rb

AGENTS = ("scripted:a", "scripted:b", "scripted:c")
SIMS = ("scripted:user", "scripted:user-guarded")


def study(frame):
    rows = []
    scores = {  # (agent, simulator): task scores of t1..t4; success when 1.0
        ("scripted:a", SIMS[0]): (1.0, 1.0, 1.0, 0.5),
        ("scripted:b", SIMS[0]): (1.0, 0.5, 0.5, 0.0),
        ("scripted:c", SIMS[0]): (0.5, 0.0, 0.0, 0.0),
        ("scripted:a", SIMS[1]): (1.0, 0.5, 0.5, 0.5),
        ("scripted:b", SIMS[1]): (1.0, 1.0, 0.5, 0.5),
        ("scripted:c", SIMS[1]): (0.0, 0.0, 0.0, 0.0),
    }
    for (agent, sim), values in scores.items():
        for i, ts in enumerate(values):
            rows.append(dict(agent_model=agent, user_model=sim, task_id=f"t{i + 1}",
                             success=ts == 1.0, task_score=ts))  # fmt: skip
    return frame(rows)


def test_scores_per_simulator_and_rank_agreement_from_scipy(frame):
    table = rb.per_simulator(study(frame))
    assert len(table) == len(AGENTS) * len(SIMS) and (table["tasks"] == 4).all()
    cell = table.set_index(["model", "simulator"])
    assert cell.loc[("scripted:a (scripted stand-in)", SIMS[0]), "pass1"] == 75.0
    assert cell.loc[("scripted:b (scripted stand-in)", SIMS[1]), "task_score"] == 75.0
    for metric in rb.METRICS:
        low, high = table[f"{metric}_low"], table[f"{metric}_high"]
        assert ((low <= table[metric]) & (table[metric] <= high)).all()
    agree = rb.agreement(table).set_index("metric")
    ts = agree.loc["task_score"]
    first = cell.xs(SIMS[0], level="simulator")["task_score"]
    second = cell.xs(SIMS[1], level="simulator")["task_score"]
    assert ts["agents"] == 3
    assert ts["kendall_tau"] == pytest.approx(sps.kendalltau(first, second).statistic)
    assert ts["spearman_rho"] == pytest.approx(sps.spearmanr(first, second).statistic)
    assert "τ" in "".join(rb.display_agreement(rb.agreement(table)).columns)


def test_agreement_is_undefined_with_a_reason_when_it_cannot_be_computed(frame):
    one = rb.per_simulator(study(frame)[lambda f: f["agent_model"] == "scripted:a"])
    row = rb.agreement(one).iloc[0]
    assert row["undefined"] == "fewer than two agents scored by both"
    assert rb.display_agreement(rb.agreement(one)).iloc[0]["Kendall τ (p)"] == "–"


def test_shifts_are_paired_per_task_and_the_largest_is_marked(frame):
    shifts = rb.shifts(study(frame))
    assert len(shifts) == len(AGENTS) * len(rb.METRICS)  # one simulator pair
    ts = shifts[shifts["metric"] == "task_score"].set_index("model")["shift"]
    assert ts["scripted:a (scripted stand-in)"] == pytest.approx(100 * (2.5 - 3.5) / 4)
    assert ts["scripted:b (scripted stand-in)"] == pytest.approx(100 * (3.0 - 2.0) / 4)
    largest = shifts[shifts["largest"]]
    assert set(largest["metric"]) == set(rb.METRICS)
    for _, part in shifts.groupby("metric"):
        assert part.loc[part["largest"], "shift"].abs().max() == part["shift"].abs().max()
    assert ((shifts["low"] <= shifts["shift"]) & (shifts["shift"] <= shifts["high"])).all()


def test_grid_crosses_agents_with_user_simulators():
    grid = rb.experiment(list(AGENTS[:2]), list(SIMS), domains=["mock"])
    pairs = [(b.agent, b.user) for b in grid.backends]
    assert pairs == [(a, u) for a in AGENTS[:2] for u in SIMS]
    assert [s.label() for s in grid.settings] == ["A3/full"]

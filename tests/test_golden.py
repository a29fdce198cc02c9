"""The golden corpus: the same episodes give the same traces, scores and model requests.

See tests/golden/regenerate.py for what the corpus holds and when to regenerate it.
"""

import asyncio
import importlib.util
import json
from pathlib import Path

import pytest

from hasbench.llm import LLMClient, register_test_provider
from hasbench.simulator import Backends
from hasbench.trace import Trace

GOLDEN = Path(__file__).parent / "golden"
_spec = importlib.util.spec_from_file_location("golden_regenerate", GOLDEN / "regenerate.py")
regen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(regen)
SCENARIOS = regen.tasks()


def test_the_corpus_covers_every_case():
    names = {n for n, *_ in regen.scripted_cases()} | {n for n, *_ in regen.llm_cases()}
    assert {p.stem for p in (GOLDEN / "traces").glob("*.jsonl")} == names
    assert len(names) > 200


@pytest.mark.parametrize("path", sorted((GOLDEN / "traces").glob("*.jsonl")), ids=lambda p: p.stem)
def test_golden_traces_read_and_rewrite_byte_for_byte(path):
    text = path.read_text(encoding="utf-8")
    assert Trace.read(path).to_jsonl() == text


def _expected(name):
    trace = (GOLDEN / "traces" / f"{name}.jsonl").read_text(encoding="utf-8")
    outcome = (GOLDEN / "outcomes" / f"{name}.json").read_text(encoding="utf-8")
    return trace, outcome


@pytest.mark.parametrize("case", regen.scripted_cases(), ids=lambda c: c[0])
def test_scripted_episodes_reproduce_their_golden_trace_and_scores(case):
    name, task_id, setting, backends = case
    text, result = asyncio.run(regen.run_case(SCENARIOS[task_id], setting, backends, None))
    trace, outcome = _expected(name)
    assert text == trace
    assert regen.dump(result) == outcome


@pytest.mark.parametrize("case", regen.llm_cases(), ids=lambda c: c[0])
def test_model_backed_episodes_send_the_golden_requests(case):
    name, task_id, setting = case
    log = []
    agent = register_test_provider("golden-agent", regen._recorder(regen.golden_agent, log))
    user = register_test_provider("golden-user", regen._recorder(regen.golden_user, log))
    text, result = asyncio.run(
        regen.run_case(SCENARIOS[task_id], setting, Backends(agent=agent, user=user), LLMClient())
    )
    trace, outcome = _expected(name)
    requests = json.loads((GOLDEN / "requests" / f"{name}.json").read_text(encoding="utf-8"))
    assert json.loads(regen.dump(log)) == requests
    assert text == trace
    assert regen.dump(result) == outcome

import asyncio

from judge_log_helpers import sample_trace

from hasbench.memo import derived, unchanged
from hasbench.paths import TASKS_DIR
from hasbench.scenario import load_tasks
from hasbench.transcript import excerpt, judge_log, transcript


class Box:
    def __init__(self, value: int) -> None:
        self.value = value


def counting() -> tuple[list[int], object]:
    calls: list[int] = []

    def build(box: Box) -> int:
        calls.append(box.value)
        return box.value * 2

    return calls, build


def test_derived_is_computed_once_inside_an_unchanged_block_and_every_time_outside():
    calls, build = counting()
    box = Box(3)
    assert derived(box, "double", build) == 6
    box.value = 4
    assert derived(box, "double", build) == 8  # outside a block: always fresh
    with unchanged(box):
        assert derived(box, "double", build) == 8
        assert derived(box, "double", build) == 8
        other = Box(5)
        assert derived(other, "double", build) == 10  # not declared: fresh each time
        assert derived(other, "double", build) == 10
    box.value = 6
    assert derived(box, "double", build) == 12  # the block's values are gone
    assert calls == [3, 4, 4, 5, 5, 6]


def test_nested_blocks_share_the_outer_values_and_drop_their_own():
    calls, build = counting()
    outer, inner = Box(1), Box(2)
    with unchanged(outer):
        assert derived(outer, "double", build) == 2
        with unchanged(inner):
            assert derived(outer, "double", build) == 2
            assert derived(inner, "double", build) == 4
        inner.value = 7
        assert derived(inner, "double", build) == 14  # the inner block ended
        assert derived(outer, "double", build) == 2
    assert calls == [1, 2, 7]


def test_tasks_started_inside_a_block_see_it():
    calls, build = counting()
    box = Box(2)

    async def read() -> int:
        return derived(box, "double", build)

    async def main() -> list[int]:
        with unchanged(box):
            return list(await asyncio.gather(read(), read(), read()))

    assert asyncio.run(main()) == [4, 4, 4]
    assert calls == [2]


def test_a_trace_judge_log_is_rendered_once_while_unchanged_and_reads_the_same():
    trace = sample_trace()
    fresh = (transcript(trace), [excerpt(trace, e.seq) for e in trace.events])
    with unchanged(trace):
        log = judge_log(trace)
        assert judge_log(trace) is log
        assert (transcript(trace), [excerpt(trace, e.seq) for e in trace.events]) == fresh
    assert judge_log(trace) is not log


def test_a_task_hash_follows_its_changes_outside_a_block():
    scn = load_tasks(TASKS_DIR / "retail.yaml")[0]
    before = scn.content_hash()
    with unchanged(scn):
        assert scn.content_hash() == before
    scn.metadata["note"] = "changed"
    assert scn.content_hash() != before

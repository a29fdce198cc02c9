"""Running coroutines from synchronous code: results come back as they are, unformatted."""

import asyncio

import pytest

from hasbench.sync import run_sync


class Costly:
    """A result that counts how often it is formatted (a study's results take long to)."""

    formatted = 0

    def __repr__(self) -> str:
        Costly.formatted += 1
        return "Costly()"


async def give(value):
    await asyncio.sleep(0)
    return value


async def fail():
    raise ValueError("the coroutine's own error")


def test_a_result_is_returned_without_being_formatted_on_the_main_thread():
    Costly.formatted = 0
    result = Costly()
    assert run_sync(give(result)) is result
    assert Costly.formatted == 0


def test_inside_a_running_loop_the_result_and_errors_come_back_too():
    async def cell():
        result = Costly()
        assert run_sync(give(result)) is result
        with pytest.raises(ValueError, match="own error"):
            run_sync(fail())

    asyncio.run(cell())

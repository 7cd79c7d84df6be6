import asyncio

import pytest

from crawler.support.interrupt import Interruption, until_done_or_abandoned


def test_a_failing_task_stops_the_others_and_its_error_is_raised():
    steps = []

    async def failing():
        await asyncio.sleep(0)
        raise OSError(28, "No space left on device")

    async def waiting():
        steps.append("started")
        await asyncio.Event().wait()  # would wait forever
        steps.append("went on")

    async def main():
        tasks = [asyncio.ensure_future(failing()), asyncio.ensure_future(waiting())]
        with pytest.raises(OSError, match="No space left"):
            await until_done_or_abandoned(tasks, None)
        assert tasks[1].cancelled()  # not left running behind the caller

    asyncio.run(main())
    assert steps == ["started"]


def test_abandon_cancels_what_runs_and_says_so():
    async def main():
        interruption = Interruption(grace=30)
        forever = asyncio.ensure_future(asyncio.sleep(3600))
        quick = asyncio.ensure_future(asyncio.sleep(0))
        interruption.abandon.set()
        assert await until_done_or_abandoned([forever, quick], interruption) is True
        assert forever.cancelled()
        done = asyncio.ensure_future(asyncio.sleep(0))
        assert await until_done_or_abandoned([done], Interruption(30.0)) is False

    asyncio.run(main())

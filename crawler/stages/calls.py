"""The extraction stage's extractor calls: one call (awaited, in a thread or inline,
within the timeout), and the calls in flight (a few at a time, with progress lines)."""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any, TextIO

from crawler.support.interrupt import until_done_or_abandoned
from crawler.support.progress import Progress

if TYPE_CHECKING:
    import logging
    from collections.abc import Awaitable, Callable, Sequence

    from crawler.extractors import Extractor
    from crawler.stages.jobs import Job
    from crawler.support.interrupt import Interruption


async def call_extractor(
    extractor: Extractor, url: str, text: str, *, is_async: bool, inline: bool, timeout: float
) -> dict[str, Any]:
    """The extractor's answer for ``url``: an ``async def extract`` awaited (within
    ``timeout`` unless it keeps its ``own_timeout``), a plain one called ``inline`` or
    in a thread within ``timeout``. Raises what the extractor raises, ``TimeoutError``,
    and ``TypeError`` when the answer is not a dict."""
    result: object  # checked below: an extractor may return anything
    if is_async:
        call = extractor.extract(url, text)
        assert inspect.isawaitable(call)  # an async def extract
        own_timeout = getattr(extractor, "own_timeout", False)
        result = await (call if own_timeout else asyncio.wait_for(call, timeout))
    elif inline:
        result = extractor.extract(url, text)
    else:
        result = await asyncio.wait_for(asyncio.to_thread(extractor.extract, url, text), timeout)
    if not isinstance(result, dict):
        name = type(extractor).__name__
        raise TypeError(f"{name}.extract() returned {type(result).__name__}, expected dict")
    return result


async def run_calls(
    jobs: Sequence[Job],
    call: Callable[[Job], Awaitable[None]],
    *,
    concurrency: int,
    stopped: Callable[[], bool],
    interruption: Interruption | None,
    logger: logging.Logger,
    interval: float,
    terminal: TextIO | None,
    note: Callable[[], str] | None,
) -> int:
    """``call`` each job, ``concurrency`` at a time, until all are done, ``stopped()``
    says no call is to start, or ``interruption`` abandons the calls in flight; a
    progress line to ``logger`` every ``interval`` seconds (and a bar on ``terminal``),
    ``note()`` at its end. The number of calls that ended."""
    progress = Progress(len(jobs), logger=logger, label="Extraction", interval=interval, terminal=terminal, note=note)
    pending = iter(jobs)
    finished = 0

    async def worker() -> None:
        nonlocal finished
        for job in pending:
            if stopped():
                return
            await call(job)
            finished += 1
            if not stopped():  # stopped: no line says it goes on (the calls in flight end)
                progress.advance()

    async def ticker() -> None:  # progress lines also while every call waits (rate limits, retries)
        while not stopped():
            await asyncio.sleep(1.0)
            if not stopped():
                progress.tick()

    ticking = asyncio.ensure_future(ticker())
    workers = [asyncio.ensure_future(worker()) for _ in range(min(concurrency, len(jobs)))]
    try:
        await until_done_or_abandoned(workers, interruption)
    finally:
        ticking.cancel()
        progress.finish()
    return finished

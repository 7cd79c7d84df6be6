import asyncio

import pytest

from crawler.support.ratelimit import RateLimiter, SlidingWindow


class FakeTime:
    def __init__(self):
        self.now = 0.0
        self.slept = []

    def clock(self):
        return self.now

    async def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_at_most_n_calls_in_any_minute():
    fake = FakeTime()
    limiter = RateLimiter(requests_per_minute=100, clock=fake.clock, sleep=fake.sleep)
    starts = []

    async def go():
        for _ in range(250):
            await limiter.acquire()
            starts.append(fake.now)
            fake.now += 0.01  # callers come faster than the limit

    asyncio.run(go())
    for i in range(len(starts) - 100):
        assert starts[i + 100] - starts[i] >= 60.0 - 1e-9
    assert starts[99] < 1.0 and starts[100] >= 60.0 and starts[200] >= 120.0


def test_no_wait_below_the_limit():
    fake = FakeTime()
    limiter = RateLimiter(requests_per_minute=3, clock=fake.clock, sleep=fake.sleep)

    async def go():
        for _ in range(10):
            ticket = await limiter.acquire()
            assert ticket.waited == 0.0
            fake.now += 21.0

    asyncio.run(go())
    assert fake.slept == []


def test_tokens_per_minute_with_settled_usage():
    fake = FakeTime()
    limiter = RateLimiter(tokens_per_minute=6000, clock=fake.clock, sleep=fake.sleep)

    async def go():
        ticket = await limiter.acquire(4000)
        limiter.settle(ticket, 5000)  # the call used more than estimated: 1000 left
        fake.now += 10
        await limiter.acquire(3000)  # waits until the first call leaves the window
        ticket = await limiter.acquire(1000)
        limiter.settle(ticket, 10)  # it used less: room again at once
        await limiter.acquire(2900)

    asyncio.run(go())
    assert fake.slept == [pytest.approx(50.0)]
    assert limiter.waited == pytest.approx(50.0)


def test_both_limits_the_longer_wait_wins():
    fake = FakeTime()
    limiter = RateLimiter(requests_per_minute=1, tokens_per_minute=60_000, clock=fake.clock, sleep=fake.sleep)

    async def go():
        await limiter.acquire(10)
        await limiter.acquire(10)

    asyncio.run(go())
    assert fake.slept == [pytest.approx(60.0)]


def test_concurrent_callers_queue_in_order():
    fake = FakeTime()
    limiter = RateLimiter(requests_per_minute=2, clock=fake.clock, sleep=fake.sleep)
    order = []

    async def call(name):
        await limiter.acquire()
        order.append((name, fake.now))

    async def go():
        await asyncio.gather(*(call(n) for n in "abcd"))

    asyncio.run(go())
    assert order == [("a", 0.0), ("b", 0.0), ("c", 60.0), ("d", 60.0)]


def test_no_limits_never_wait():
    fake = FakeTime()
    limiter = RateLimiter(clock=fake.clock, sleep=fake.sleep)
    asyncio.run(limiter.acquire(10**9))
    assert not limiter.active and fake.slept == []


def test_window_rejects_a_zero_rate():
    with pytest.raises(ValueError, match="more than 0"):
        SlidingWindow(0)

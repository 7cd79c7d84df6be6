import asyncio

import pytest

from crawler.lib.ratelimit import RateLimiter, TokenBucket


class FakeTime:
    def __init__(self):
        self.now = 0.0
        self.slept = []

    def clock(self):
        return self.now

    async def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_tokens_per_minute_with_settled_usage():
    fake = FakeTime()
    limiter = RateLimiter(tokens_per_minute=6000, clock=fake.clock, sleep=fake.sleep)

    async def go():
        await limiter.acquire(4000)
        limiter.settle(4000, 5000)  # the call used more than estimated: 1000 left
        await limiter.acquire(3000)  # 2000 missing at 100 tokens/s

    asyncio.run(go())
    assert fake.slept == [pytest.approx(20.0)]
    assert limiter.waited == pytest.approx(20.0)


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
    assert order == [("a", 0.0), ("b", 0.0), ("c", 30.0), ("d", 60.0)]


def test_no_limits_never_wait():
    fake = FakeTime()
    limiter = RateLimiter(clock=fake.clock, sleep=fake.sleep)
    asyncio.run(limiter.acquire(10**9))
    assert not limiter.active and fake.slept == []


def test_bucket_rejects_a_zero_rate():
    with pytest.raises(ValueError, match="more than 0"):
        TokenBucket(0, now=0)

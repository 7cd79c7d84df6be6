from crawler.lib.ratelimit import RateLimiter


def test_at_most_n_calls_in_any_minute():
    now = [0.0]
    limiter = RateLimiter(100, clock=lambda: now[0])
    starts = []
    for _ in range(250):
        wait = limiter.reserve()
        starts.append(now[0] + wait)
        now[0] += 0.01  # callers come faster than the limit
    starts.sort()
    for i in range(len(starts) - 100):
        assert starts[i + 100] - starts[i] >= 60.0 - 1e-9
    assert starts[99] < 1.0 and starts[100] >= 60.0 and starts[200] >= 120.0


def test_no_wait_below_the_limit():
    now = [0.0]
    limiter = RateLimiter(3, clock=lambda: now[0])
    for _ in range(10):
        assert limiter.reserve() == 0.0
        now[0] += 21.0

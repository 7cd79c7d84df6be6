"""A run's parts and the claim on its processing, against a real Redis (tests/redis_server.py)."""

from __future__ import annotations

import redis

from crawler.frontier.runpart import (
    RunPart,
    claim_processing,
    finish_processing,
    processing_key,
    read_run,
    renew_processing,
    write_part,
)
from crawler.frontier.runstate import RunKeys


def test_the_parts_of_a_run_add_up(redis_url):
    server, keys = redis.Redis.from_url(redis_url), RunKeys("r1")
    write_part(server, keys, RunPart(pages={"a", "b"}, domains={"x"}, counts={"pages/new": 2}))
    write_part(server, keys, RunPart(pages={"b", "c"}, gone={"d"}, reasons={"retry"}, counts={"pages/new": 1}))
    run = read_run(server, keys)
    assert (run.pages, run.gone, run.domains, run.reasons) == ({"a", "b", "c"}, {"d"}, {"x"}, {"retry"})
    assert run.counts == {"pages/new": 3}
    assert read_run(server, RunKeys("r2")) == RunPart()


def test_one_processing_holds_the_run_and_only_its_owner_ends_it(redis_url):
    server, keys = redis.Redis.from_url(redis_url), RunKeys("r1")
    assert claim_processing(server, keys, "a") == ("claimed", "")
    assert claim_processing(server, keys, "b") == ("held", "a")
    assert renew_processing(server, keys, "a") and not renew_processing(server, keys, "b")
    finish_processing(server, keys, "b", "r1")  # not b's claim: nothing changes
    assert claim_processing(server, keys, "c") == ("held", "a")
    finish_processing(server, keys, "a", None)  # a failed: the run may be processed again
    assert claim_processing(server, keys, "c") == ("claimed", "")
    finish_processing(server, keys, "c", "r1")
    assert claim_processing(server, keys, "d") == ("processed", "r1")


def test_a_processing_that_died_frees_the_run_when_its_claim_expires(redis_url):
    server, keys = redis.Redis.from_url(redis_url), RunKeys("r1")
    assert claim_processing(server, keys, "killed") == ("claimed", "")
    assert 0 < server.ttl(processing_key(keys)) <= 60  # never renewed again
    server.delete(processing_key(keys))  # what its expiry does
    assert claim_processing(server, keys, "next") == ("claimed", "")
    assert not renew_processing(server, keys, "killed")

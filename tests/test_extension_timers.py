import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.misc import build_from_crawler
from twisted.internet.task import Clock

import crawler.extensions.timers
from crawler.addons.incremental import EXTENSIONS
from crawler.extensions.timers import INTERVAL, TimerSweep


def test_the_add_on_installs_it():
    assert "crawler.extensions.timers.TimerSweep" in EXTENSIONS


def test_off_without_a_reactor(make_crawler):
    with pytest.raises(NotConfigured, match="no Twisted reactor"):
        build_from_crawler(TimerSweep, make_crawler())


def test_a_timer_every_second_while_the_engine_runs(make_crawler, monkeypatch):
    monkeypatch.setattr(crawler.extensions.timers, "is_reactor_installed", lambda: True)
    sweep = build_from_crawler(TimerSweep, make_crawler())
    sweep.clock = clock = Clock()
    assert sweep.task is None
    sweep.engine_started()
    task = sweep.task
    assert task is not None and task.running and task.interval == INTERVAL
    clock.advance(INTERVAL)
    assert [call.getTime() for call in clock.getDelayedCalls()] == [2 * INTERVAL]  # the next one set
    sweep.engine_stopped()
    assert not task.running and sweep.task is None and not clock.getDelayedCalls()
    sweep.engine_stopped()  # (twice: nothing to stop)

"""A POST of each run's summary and change list to ``CHANGES_WEBHOOK_URL``."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from scrapy.exceptions import NotConfigured

from crawler import __version__
from crawler import signals as crawler_signals
from crawler.cache import cache_for
from crawler.config import typed
from crawler.support.backoff import backoff_delay
from crawler.support.secrets import mask_data, mask_error

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from crawler.cache.ports import ChangeReader

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: seconds before the first retry (doubled each retry, with jitter)
RETRY_BASE_DELAY = 0.5


@dataclass
class Delivery:
    """How a POST went: ``delivered`` (a 2xx answer), the attempts made, the last
    HTTP status (None: no answer) and, when not delivered, why."""

    delivered: bool
    attempts: int
    status: int | None = None
    error: str = ""


def post_json(
    url: str,
    body: bytes | bytearray,
    *,
    within: float,
    retries: int,
    base_delay: float = RETRY_BASE_DELAY,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Delivery:
    """POST ``body`` (JSON) to ``url``; connection errors, timeouts, 408, 429 and 5xx
    answers are tried again (at most ``retries`` times, backing off), other answers
    are final. Everything, waits included, ends within ``within`` seconds: each attempt
    gets the time left as its timeout."""
    deadline = clock() + within
    attempts, status, error = 0, None, ""
    while True:
        left = deadline - clock()
        if left <= 0:
            return Delivery(False, attempts, status, error or f"no answer within {within:g} s")
        attempts += 1
        request = urllib.request.Request(
            url,
            data=body,
            method="POST",
            headers={"Content-Type": "application/json", "User-Agent": f"incremental-docs-crawler/{__version__}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=left) as answer:
                return Delivery(True, attempts, answer.status)
        except urllib.error.HTTPError as exc:
            status, error = exc.code, f"HTTP {exc.code}"
            exc.close()
            if exc.code < 500 and exc.code not in (408, 429):
                return Delivery(False, attempts, status, error)
        except (OSError, ValueError, http.client.HTTPException) as exc:  # URLError, a timeout, a reset connection
            status, error = None, f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
        if attempts > retries:
            return Delivery(False, attempts, status, error)
        wait = min(backoff_delay(attempts, base=base_delay, cap=within), deadline - clock())
        if wait > 0:
            sleep(wait)


def shown_url(url: str) -> str:
    """``url`` as the log shows it: its scheme and host only (a webhook's path or query
    often holds its token, a user name and password may precede the host).

    >>> shown_url("https://user:pw@hooks.example:8443/services/T0/B0/XyZ?token=1")
    'https://hooks.example:8443/...'
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    return f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}/..."


#: what the webhook's ``report`` leaves out: the change list is the body's own
REPORT_LEFT_OUT = ("changes", "changes_sample")


def webhook_body(report: dict[str, Any], summary: str, changes: Iterable[dict[str, Any]]) -> tuple[bytearray, int]:
    """What the webhook receives, as JSON: the run's id, its summary line, its report
    without the change list, and the change list (``changes``, read as it is encoded:
    the body is the one copy held); every secret this process read masked. Returns
    the body and how many changes it holds.

    >>> body, n = webhook_body({"run_id": "r", "changes_sample": []}, "s", iter([{"url": "u"}]))
    >>> json.loads(body), n
    ({'run_id': 'r', 'summary': 's', 'report': {'run_id': 'r'}, 'changes': [{'url': 'u'}]}, 1)
    """
    head = {
        "run_id": report.get("run_id"),
        "summary": summary,
        "report": {key: value for key, value in report.items() if key not in REPORT_LEFT_OUT},
    }
    body = bytearray(json.dumps(mask_data(head), ensure_ascii=False)[:-1].encode())
    body += b', "changes": ['
    count = 0
    for change in changes:
        if count:
            body += b", "
        body += json.dumps(mask_data(change), ensure_ascii=False).encode()
        count += 1
    body += b"]}"
    return body, count


async def in_daemon_thread(func: Callable[[], T], within: float) -> T:
    """``func()`` in a daemon thread (one that never holds the process's exit, unlike
    ``asyncio.to_thread``'s), awaited for ``within`` seconds at most (TimeoutError)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if done.done():
            return
        done.set_exception(error) if error is not None else done.set_result(result)

    def target() -> None:
        try:
            result: Any = func()
        except Exception as exc:  # noqa: BLE001 - said by the awaiting side
            loop.call_soon_threadsafe(settle, None, exc)
        else:
            loop.call_soon_threadsafe(settle, result, None)

    threading.Thread(target=target, name="changes-webhook", daemon=True).start()
    return await asyncio.wait_for(done, within)


#: tries again after a connection error, a timeout or a 5xx answer
RETRIES = 3


class ChangesWebhook:
    """POSTs each run's summary and change list (:func:`webhook_body`, JSON) to
    ``CHANGES_WEBHOOK_URL`` once the run report is written. Connection errors,
    timeouts and 5xx answers are tried again ``RETRIES`` (3) times with
    backoff, all within ``CHANGES_WEBHOOK_TIMEOUT`` seconds: the crawl then exits
    whatever the server does. A delivery that fails is an error in the log and the stat
    ``webhook/failed``; the cache and the run report are stored either way.

    Off while ``CHANGES_WEBHOOK_URL`` is empty. The body carries no secret: every
    secret this process read (API keys...) is masked; the log shows the URL's host only.
    """

    def __init__(
        self, url: str, *, within: float, retries: int, stats: StatsCollector, crawler: Crawler | None = None
    ) -> None:
        self.url = url
        self.within = within
        self.retries = retries
        self.stats = stats
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ChangesWebhook:
        settings = typed(crawler.settings)
        url = settings.get("CHANGES_WEBHOOK_URL") or ""
        if not url:
            raise NotConfigured  # no message: Scrapy would warn of it on every crawl
        if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
            raise ValueError(f"CHANGES_WEBHOOK_URL must be an http:// or https:// URL, got {shown_url(url)!r}")
        within = settings.getfloat("CHANGES_WEBHOOK_TIMEOUT")
        if within <= 0:
            raise ValueError(f"CHANGES_WEBHOOK_TIMEOUT must be > 0 seconds, got {within!r}")
        assert crawler.stats is not None
        extension = cls(url, within=within, retries=RETRIES, stats=crawler.stats, crawler=crawler)
        crawler.signals.connect(extension.run_reported, signal=crawler_signals.run_reported)
        return extension

    async def run_reported(self, report: dict[str, Any], summary: str) -> None:
        assert self.crawler is not None
        store: ChangeReader = cache_for(self.crawler).store  # all it asks of the store
        body, count = webhook_body(report, summary, store.iter_run_changes(str(report.get("run_id", ""))))
        try:
            delivery = await in_daemon_thread(
                # a second past the bound: post_json ends by then, whatever the server does
                lambda: post_json(self.url, body, within=self.within, retries=self.retries),
                self.within + 1,
            )
        except Exception as exc:  # noqa: BLE001 - the thread outlived its bound (a host name that never resolves...)
            delivery = Delivery(False, 0, None, f"{type(exc).__name__}: {exc}")
        self.stats.inc_value("webhook/attempts", delivery.attempts)
        if delivery.delivered:
            self.stats.inc_value("webhook/delivered")
            logger.info(
                "Run %(run)s: %(n)d changes sent to the webhook %(url)s (HTTP %(status)s)",
                {
                    "run": report.get("run_id"),
                    "n": count,
                    "url": shown_url(self.url),
                    "status": delivery.status,
                },
            )
            return
        self.stats.inc_value("webhook/failed")
        logger.error(
            "Run %(run)s: the webhook %(url)s was not sent (%(attempts)d attempts within %(within)g s): %(error)s",
            {
                "run": report.get("run_id"),
                "url": shown_url(self.url),
                "attempts": delivery.attempts,
                "within": self.within,
                "error": mask_error(delivery.error),
            },
        )

"""ChangesWebhook: a POST of each run's summary and change list, retried, bounded in
time, carrying no secret; against local servers on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import socket
import threading
from http.server import BaseHTTPRequestHandler

import pytest
from scrapy.exceptions import NotConfigured

from crawler import signals as crawler_signals
from crawler.cache import cache_for
from crawler.extensions.webhook import ChangesWebhook, post_json
from crawler.support import secrets
from tests.helpers import run, serve, stop_serving


@pytest.fixture
def make_crawler(make_crawler, tmp_path):
    """Crawlers with a cache each (the change list is read from the store), holding the
    changes of run r1 (:data:`CHANGES`), in a directory of its own."""
    made = iter(range(100))

    def factory(settings=None, spidercls=None):
        crawler = make_crawler({"EXTRACTED_DOCS_DIR": str(tmp_path / f"cache{next(made)}"), **(settings or {})})
        cache_for(crawler).store.put_run_changes("r1", CHANGES)
        return crawler

    return factory


CHANGES = [{"url": "https://a.com/x", "url_hash": "h", "status": "new", "content_hash": "c",
            "extraction_file": "extractions/h.json"}]  # fmt: skip
REPORT = {"run_id": "r1", "pages_new": 1, "changes_total": 1, "changes_sample": CHANGES}


class Hook:
    """A webhook server: answers each POST with the next of ``statuses`` (the last one
    stays), keeps the bodies."""

    def __init__(self, *statuses: int) -> None:
        self.statuses = list(statuses)
        self.bodies: list[dict] = []
        self.lock = threading.Lock()
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with hook.lock:
                    hook.bodies.append(json.loads(body))
                    status = hook.statuses.pop(0) if len(hook.statuses) > 1 else hook.statuses[0]
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = serve(Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook?token=sekrit-token"

    def close(self):
        stop_serving(self.server)


@pytest.fixture
def hook():
    made = []

    def factory(*statuses):
        made.append(Hook(*statuses))
        return made[-1]

    yield factory
    for server in made:
        server.close()


@pytest.fixture
def silent_server():
    """A server that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/hook"
    sock.close()


def no_wait(seconds):
    pass


def test_off_without_a_url_and_bad_settings_said(make_crawler):
    with pytest.raises(NotConfigured):
        ChangesWebhook.from_crawler(make_crawler())
    with pytest.raises(ValueError, match="must be an http:// or https:// URL"):
        ChangesWebhook.from_crawler(make_crawler({"CHANGES_WEBHOOK_URL": "ftp://x/hook"}))
    with pytest.raises(ValueError, match="CHANGES_WEBHOOK_TIMEOUT must be > 0"):
        ChangesWebhook.from_crawler(make_crawler({"CHANGES_WEBHOOK_URL": "http://x/", "CHANGES_WEBHOOK_TIMEOUT": 0}))


def test_a_5xx_then_a_2xx_is_delivered_on_the_retry(hook):
    server = hook(503, 204)
    delivery = post_json(server.url, b"{}", within=30, retries=3, sleep=no_wait)
    assert (delivery.delivered, delivery.attempts, delivery.status) == (True, 2, 204)


def test_a_4xx_is_final_and_retries_end(hook):
    server = hook(404)
    assert post_json(server.url, b"{}", within=30, retries=3, sleep=no_wait).attempts == 1
    failing = hook(500)
    delivery = post_json(failing.url, b"{}", within=30, retries=2, sleep=no_wait)
    assert (delivery.delivered, delivery.attempts, delivery.error) == (False, 3, "HTTP 500")


def test_a_refused_connection_is_retried_then_given_up():
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    delivery = post_json(url, b"{}", within=30, retries=2, sleep=no_wait)
    assert (delivery.delivered, delivery.attempts) == (False, 3) and "refused" in delivery.error.lower()


def test_a_server_that_never_answers_is_given_up_within_the_bound(silent_server):
    delivery = post_json(silent_server, b"{}", within=0.3, retries=5)
    assert not delivery.delivered and delivery.status is None


def test_the_extension_posts_summary_and_changes_without_secrets(make_crawler, hook, monkeypatch):
    monkeypatch.setenv("TEST_WEBHOOK_KEY", "sk-abcdefghijklmnopqrstuvwx")
    key = secrets.from_env("TEST_WEBHOOK_KEY")
    server = hook(200)
    crawler = make_crawler({"CHANGES_WEBHOOK_URL": server.url})
    webhook = ChangesWebhook.from_crawler(crawler)  # noqa: F841 - kept: signals hold weak references
    report = {**REPORT, "extraction_stopped": f"the endpoint refused the key {key}"}
    run(crawler.signals.send_catch_log_async(signal=crawler_signals.run_reported, report=report, summary="run r1 ..."))
    (body,) = server.bodies
    assert body["run_id"] == "r1" and body["summary"] == "run r1 ..." and body["changes"] == CHANGES
    assert "changes_sample" not in body["report"] and body["report"]["pages_new"] == 1
    assert key not in json.dumps(body)
    assert crawler.stats.get_value("webhook/delivered") == 1


def test_a_failed_delivery_is_an_error_naming_the_host_only(make_crawler, silent_server, caplog):
    crawler = make_crawler({"CHANGES_WEBHOOK_URL": silent_server + "?token=sekrit", "CHANGES_WEBHOOK_TIMEOUT": 0.3})
    webhook = ChangesWebhook.from_crawler(crawler)  # noqa: F841 - kept: signals hold weak references
    with caplog.at_level(logging.ERROR):
        run(crawler.signals.send_catch_log_async(signal=crawler_signals.run_reported, report=REPORT, summary="s"))
    assert crawler.stats.get_value("webhook/failed") == 1
    assert "the webhook http://127.0.0.1:" in caplog.text and "was not sent" in caplog.text
    assert "sekrit" not in caplog.text

"""LLMExtractor against a local server speaking the chat-completions protocol."""

from __future__ import annotations

import asyncio
import json

import pytest
from scrapy.utils.misc import build_from_crawler

from crawler.extractors import ExtractorUnavailable
from crawler.extractors.llm import DEFAULT_SCHEMA, InvalidAnswer, LLMExtractor, load_schema
from crawler.support.ratelimit import RateLimiter
from tests.llm_server import KEY, MODEL, LLMServer, count_tokens


@pytest.fixture
def make_crawler(make_crawler):
    """Crawlers without a cache: these components never open it (and a test builds
    several crawlers on one directory)."""
    return lambda settings=None, spidercls=None: make_crawler(settings, spidercls, cache=False)


PAGE = "# Install\n\nRun pip install example to install it.\n\nIt needs Python 3.11."


@pytest.fixture
def server():
    served = LLMServer().start()
    yield served
    served.stop()


@pytest.fixture
def build(make_crawler, server, monkeypatch):
    """``build(**settings)``: an LLMExtractor built as Scrapy builds it, pointed at the
    test server, its key in $LLM_API_KEY; its sleeps recorded, not slept."""
    monkeypatch.setenv("LLM_API_KEY", KEY)

    def factory(**settings):
        crawler = make_crawler(
            {
                "LLM_BASE_URL": server.base_url,
                "LLM_MODEL": MODEL,
                **settings,
            }
        )
        extractor = build_from_crawler(LLMExtractor, crawler)
        extractor.slept = []

        async def sleep(seconds):
            extractor.slept.append(seconds)

        extractor.sleep = sleep
        return crawler, extractor

    return factory


def extract(extractor, *pages):
    async def go():
        try:
            return [await extractor.extract(url, text) for url, text in pages]
        finally:
            await extractor.client.close()

    return asyncio.run(go())


def stat(crawler, name):
    return crawler.stats.get_value(name, 0)


def test_structured_extraction_and_token_accounting(build, server):
    crawler, extractor = build()
    [data] = extract(extractor, ("https://d.com/install", PAGE))
    assert set(data) == set(DEFAULT_SCHEMA["properties"])
    assert data["title"] == "Install" and data["relevant"] is True
    [call] = server.calls
    assert call.status == 200
    body = call.body
    assert body["model"] == MODEL and body["temperature"] == 0.0 and body["max_tokens"] == 2048
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "extraction", "schema": DEFAULT_SCHEMA},
    }
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][1]["content"] == "URL: https://d.com/install\n\n" + PAGE
    # the usage the server reported, not the estimate
    expected_sent = sum(count_tokens(m["content"]) + 3 for m in body["messages"]) + 3
    assert stat(crawler, "llm/tokens_sent") == extractor.tokens_sent == expected_sent
    assert stat(crawler, "llm/tokens_received") == count_tokens(json.dumps(data)) > 0
    assert stat(crawler, "llm/requests") == 1 and stat(crawler, "llm/retries") == 0


def test_version_changes_with_model_prompt_and_schema_only(build, server):
    server.models = (MODEL, "other-model")
    versions = {
        "base": build()[1].version,
        "again": build()[1].version,
        "temperature": build(LLM_TEMPERATURE=0.7, LLM_MAX_TOKENS=100)[1].version,
        "model": build(LLM_MODEL="other-model")[1].version,
        "prompt": build(LLM_PROMPT="Page {url}:\n\n{content}")[1].version,
        "system": build(LLM_SYSTEM_PROMPT="Summarise.")[1].version,
        "schema": build(LLM_SCHEMA='{"type": "object", "properties": {"x": {"type": "string"}}}')[1].version,
    }
    assert versions["base"] == versions["again"] == versions["temperature"]
    assert versions["base"].startswith(MODEL + ":")
    assert len({versions[k] for k in ("base", "model", "prompt", "system", "schema")}) == 5


def test_429_waits_as_retry_after_says(build, server):
    server.retry_after = "7"
    server.behaviours = [("install", ["429", "ok"])]
    crawler, extractor = build()
    [data] = extract(extractor, ("https://d.com/install", PAGE))
    assert data["title"] == "Install"
    assert [c.status for c in server.calls] == [429, 200]
    assert extractor.slept == [7.0]
    assert stat(crawler, "llm/retry_reason/429") == stat(crawler, "llm/retries") == 1


def test_server_errors_back_off_then_give_up(build, server):
    server.behaviours = [("flaky", ["500", "500", "ok"]), ("down", ["500"])]
    _, extractor = build(LLM_MAX_RETRIES=2)
    [data] = extract(extractor, ("https://d.com/flaky", PAGE))
    assert data["title"] == "Install"
    assert 0.75 <= extractor.slept[0] <= 1.25 and 1.5 <= extractor.slept[1] <= 2.5  # doubled, with jitter
    with pytest.raises(RuntimeError, match=r"HTTP 500: The server had an error \(after 2 retries\)"):
        extract(build(LLM_MAX_RETRIES=2)[1], ("https://d.com/down", PAGE))
    assert [c.status for c in server.calls] == [500, 500, 200, 500, 500, 500]


def test_pages_failing_every_retry_in_a_row_make_the_extractor_unavailable(build, server):
    """An endpoint answering 500 to everything is down: the third page in a row that
    failed every retry stops the extraction, not each page waiting out its retries."""
    server.behaviours = [("down", ["500"]), ("fine", ["ok"]), ("bad", ["bad_json"])]
    _, extractor = build(LLM_MAX_RETRIES=1)

    async def go():
        outcomes = []
        try:
            for url in ("down/1", "down/2", "fine", "down/3", "bad", "down/4", "down/5", "down/6"):
                try:
                    await extractor.extract(f"https://d.com/{url}", PAGE)
                    outcomes.append("ok")
                except ExtractorUnavailable as exc:
                    outcomes.append(f"unavailable: {exc}")
                    break
                except Exception:  # noqa: BLE001 - the page's own failure
                    outcomes.append("failed")
        finally:
            await extractor.client.close()
        return outcomes

    outcomes = asyncio.run(go())
    # an answer resets the count, an invalid one too (the endpoint answered: the page's fault)
    assert outcomes[:7] == ["failed", "failed", "ok", "failed", "failed", "failed", "failed"]
    assert outcomes[7].startswith("unavailable: ") and "failed 3 pages in a row, each after 1 retries" in outcomes[7]
    assert "HTTP 500" in outcomes[7]


def test_timeout_is_retried(build, server):
    server.slow_seconds = 4.0
    server.behaviours = [("slow", ["slow", "ok"])]
    crawler, extractor = build(EXTRACTOR_TIMEOUT=1.5)
    [data] = extract(extractor, ("https://d.com/slow", PAGE))
    assert data["title"] == "Install"
    assert stat(crawler, "llm/retry_reason/timeout") == 1
    assert len(server.calls) >= 1  # the slow one may not be recorded before the test ends


@pytest.mark.parametrize("mode", ["bad_json", "wrong_schema"])
def test_invalid_answer_is_asked_again_then_fails(build, server, mode):
    server.behaviours = [("once", [mode, "ok"]), ("always", [mode])]
    crawler, extractor = build()
    [data] = extract(extractor, ("https://d.com/once", PAGE))
    assert data["title"] == "Install"
    with pytest.raises(InvalidAnswer):
        extract(build()[1], ("https://d.com/always", PAGE))
    assert [c.mode for c in server.calls] == [mode, "ok", mode, mode]  # INVALID_RETRIES = 1
    assert stat(crawler, "llm/retry_reason/invalid_answer") == 1


@pytest.mark.parametrize(
    ("settings", "message"),
    [({"LLM_MODEL": "no-such-model"}, "does not exist"), ({}, "Incorrect API key")],
)
def test_wrong_model_or_key_makes_the_extractor_unavailable(build, server, monkeypatch, settings, message):
    if not settings:  # no key at all
        monkeypatch.delenv("LLM_API_KEY")
    _, extractor = build(**settings)
    with pytest.raises(ExtractorUnavailable, match=message):
        extract(extractor, ("https://d.com/a", PAGE))
    assert len(server.calls) == 1  # not retried


def test_json_object_mode_puts_the_schema_in_the_prompt(build, server):
    _, extractor = build(LLM_RESPONSE_FORMAT="json_object")
    [data] = extract(extractor, ("https://d.com/a", PAGE))
    assert set(data) == set(DEFAULT_SCHEMA["properties"])
    body = server.calls[0].body
    assert body["response_format"] == {"type": "json_object"}
    assert json.dumps(DEFAULT_SCHEMA) in body["messages"][0]["content"]


def test_free_text_answer_without_schema(build, server):
    _, extractor = build(LLM_SCHEMA="off")
    [data] = extract(extractor, ("https://d.com/a", PAGE))
    assert data == {"text": "Summary: " + PAGE}
    assert "response_format" not in server.calls[0].body


def test_requests_per_minute_limit(build, server):
    _, extractor = build()
    now = [0.0]

    async def sleep(seconds):
        extractor.slept.append(seconds)
        now[0] += seconds

    extractor.limiter = RateLimiter(2, clock=lambda: now[0], sleep=sleep)
    extract(extractor, *[(f"https://d.com/{i}", PAGE) for i in range(3)])
    assert extractor.slept == [60.0]  # two at once, the third once the first is a minute old
    assert len(server.calls) == 3


def test_cost_and_report_section(build, server):
    crawler, extractor = build(LLM_PRICES=json.dumps({MODEL: [2.0, 8.0]}))
    extract(extractor, ("https://d.com/a", PAGE))
    report = {"tokens": {"saved_unchanged_estimate": 1000, "saved_boilerplate_estimate": 200}}
    asyncio.run(extractor.run_report(cache=None, report=report))
    section = report["llm"]
    sent, received = extractor.tokens_sent, extractor.tokens_received
    assert section["cost_usd"] == round(sent * 2 / 1e6 + received * 8 / 1e6, 6) > 0
    factor = section["estimate_calibration"]
    assert factor == round(sent / extractor.tokens_estimated, 4)
    assert section["tokens_saved_unchanged"] == round(1000 * factor)
    assert section["cost_saved_usd"] == round((round(1000 * factor) + round(200 * factor)) * 2 / 1e6, 6)
    assert stat(crawler, "llm/cost_usd") == section["cost_usd"]


@pytest.mark.parametrize(
    ("settings", "env", "message"),
    [
        ({"LLM_API_KEY": "sk-x"}, {}, "Setting LLM_API_KEY is refused"),
        ({"LLM_BASE_URL": None}, {"OPENAI_API_KEY": "", "LLM_API_KEY": ""}, "nor OPENAI_API_KEY holds an API key"),
        ({"LLM_SCHEMA": "{not json"}, {}, "LLM_SCHEMA='{not json' is not valid JSON"),
        ({"LLM_SCHEMA": "/no/such/schema.json"}, {}, "neither JSON nor a readable file"),
        ({"LLM_SCHEMA": '{"type": "array"}'}, {}, "must describe a JSON object"),
        ({"LLM_PROMPT": "Summarise {url}"}, {}, "must contain {content}"),
        ({"LLM_PRICES": json.dumps({MODEL: "cheap"})}, {}, "must be \\[input, output\\]"),
        ({"LLM_PRICES": "[1, 2]"}, {}, "LLM_PRICES="),
        ({"LLM_RESPONSE_FORMAT": "xml"}, {}, "LLM_RESPONSE_FORMAT must be one of"),
        ({"LLM_REQUESTS_PER_MIN": -1}, {}, "LLM_REQUESTS_PER_MIN must be >= 0"),
        ({"LLM_MAX_RETRIES": "many"}, {}, "LLM_MAX_RETRIES='many' is not a valid whole number"),
    ],
)
def test_bad_settings_are_named(make_crawler, server, monkeypatch, settings, env, message):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    crawler = make_crawler({"LLM_BASE_URL": server.base_url, "LLM_MODEL": MODEL, **settings})
    with pytest.raises(ValueError, match=message):
        build_from_crawler(LLMExtractor, crawler)


def test_schema_from_a_file(tmp_path):
    path = tmp_path / "schema.json"
    path.write_text('{"type": "object", "properties": {"name": {"type": "string"}}}')
    assert load_schema(str(path)) == {"type": "object", "properties": {"name": {"type": "string"}}}


def test_cut_answer_is_not_asked_again(build, server):
    server.behaviours = [("long", ["length"])]
    crawler, extractor = build()
    with pytest.raises(InvalidAnswer, match="cut at LLM_MAX_TOKENS=2048; raise it"):
        extract(extractor, ("https://d.com/long", PAGE))
    assert len(server.calls) == 1 and stat(crawler, "llm/invalid_answers") == 1


def test_exhausted_quota_makes_the_extractor_unavailable(build, server):
    server.behaviours = [("a", ["quota"])]
    _, extractor = build()
    with pytest.raises(ExtractorUnavailable, match="exceeded your current quota"):
        extract(extractor, ("https://d.com/a", PAGE))
    assert len(server.calls) == 1  # a 429, but not one that waiting cures


def test_unreachable_endpoint_makes_the_extractor_unavailable(build):
    crawler, extractor = build(LLM_BASE_URL="http://127.0.0.1:1/v1", LLM_MAX_RETRIES=2)
    with pytest.raises(ExtractorUnavailable, match=r"cannot reach http://127.0.0.1:1/v1/: Connection error\. \(\w+"):
        extract(extractor, ("https://d.com/a", PAGE))
    assert stat(crawler, "llm/retry_reason/connection") == 2 and stat(crawler, "llm/requests") == 3


def test_answers_without_usage_are_counted_by_estimate(build, server):
    server.report_usage = False
    crawler, extractor = build()
    now = [0.0]

    async def sleep(seconds):
        extractor.slept.append(seconds)
        now[0] += seconds

    extractor.limiter = RateLimiter(tokens_per_minute=2 * 2048 + 300, clock=lambda: now[0], sleep=sleep)
    extract(extractor, *[(f"https://d.com/{i}", PAGE) for i in range(3)])
    assert stat(crawler, "llm/usage_estimated") == 3
    assert extractor.tokens_sent == 3 * extractor.estimate_tokens("https://d.com/0", PAGE)
    assert extractor.tokens_received > 0
    assert extractor.slept == []  # the estimates were settled, not the reservations: room for all three


def test_openai_key_is_not_sent_to_another_endpoint(make_crawler, server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key-1234")
    monkeypatch.delenv("LLM_API_KEY", raising=False)
    server.key = "no-key"  # what the client sends when it has no key
    crawler = make_crawler({"LLM_BASE_URL": server.base_url, "LLM_MODEL": MODEL})
    extractor = build_from_crawler(LLMExtractor, crawler)
    [data] = extract(extractor, ("https://d.com/a", PAGE))
    assert data["title"] == "Install"


def test_rate_limit_settings_reach_the_limiter(build):
    _, extractor = build(LLM_REQUESTS_PER_MIN=5, LLM_TOKENS_PER_MIN=1000)
    assert (extractor.limiter.requests.limit, extractor.limiter.tokens.limit) == (5, 1000)
    asyncio.run(extractor.client.close())


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"LLM_TEMPERATURE": 5}, "LLM_TEMPERATURE must be between 0 and 2"),
        ({"LLM_SCHEMA": '{"type": "object", "properties": 3}'}, r"\$.properties: 3 is not of type .object."),
        ({"LLM_BASE_URL": "localhost:11434/v1"}, "must be an http:// or https:// URL"),
    ],
)
def test_more_bad_settings(make_crawler, server, settings, message):
    crawler = make_crawler({"LLM_BASE_URL": server.base_url, "LLM_MODEL": MODEL, **settings})
    with pytest.raises(ValueError, match=message) as caught:
        build_from_crawler(LLMExtractor, crawler)
    assert "abcdef123456" not in str(caught.value)

"""An LLM extractor: one chat-completions call per page, through any OpenAI-compatible
endpoint (OpenAI, vLLM, Ollama, llama.cpp, LiteLLM).

Enable it with ``-s EXTRACTOR=crawler.extractors.llm.LLMExtractor``; the ``LLM_*``
settings choose the endpoint, model, prompt and output schema. The API key is read
from the environment variable ``LLM_API_KEY`` (or ``OPENAI_API_KEY``, for OpenAI's API
only), never from settings, and never written anywhere: its value
(in any encoding) is masked in logs, stored errors and run reports (``crawler.support.secrets``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import openai

from crawler import signals as crawler_signals
from crawler.choices import run_choices
from crawler.config import typed
from crawler.defaults import SETTINGS
from crawler.extractors import ExtractorUnavailable
from crawler.lib.hashing import sha256_hex
from crawler.lib.tokens import calibration, estimate_chat_tokens, estimate_tokens
from crawler.support.json_schema import check_schema, schema_errors
from crawler.support.openai_errors import api_error, error_code, retry_delay, retry_reason
from crawler.support.plural import plural
from crawler.support.ratelimit import RateLimiter
from crawler.support.secrets import LLM_KEY_ENV, OPENAI_KEY_ENV, from_env

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

logger = logging.getLogger(__name__)

#: the host of OpenAI's API: the only one OPENAI_API_KEY is sent to
OPENAI_HOST = "api.openai.com"

DEFAULT_SYSTEM_PROMPT = (
    "You read one page of a documentation or company website, given as markdown, and "
    "extract what a reader of the site's documentation needs. Decide whether the page is "
    "relevant documentation (not a login, search, legal or empty page), explain the "
    "decision in one sentence, and give the page's title, a summary of two or three "
    "sentences, and its content as a list of self-contained statements, keeping code, "
    "commands, names and numbers exact."
)
DEFAULT_PROMPT = "URL: {url}\n\n{content}"
DEFAULT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "relevant": {"type": "boolean"},
        "decision_explanation": {"type": "string"},
        "title": {"type": "string"},
        "summary": {"type": "string"},
        "content": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["relevant", "decision_explanation", "title", "summary", "content"],
    "additionalProperties": False,
}
#: LLM_RESPONSE_FORMAT values
RESPONSE_FORMATS = ("json_schema", "json_object", "text")
#: seconds before the first retry of a failed call, doubled each retry up to the
#: most (the server's Retry-After wins)
RETRY_BASE_DELAY = 1.0
RETRY_MAX_DELAY = 120.0
#: calls again for an answer that is not JSON valid for the schema
INVALID_RETRIES = 1
#: pages in a row whose calls failed every retry (429, 5xx, timeouts): the endpoint is
#: down and extraction stops for the run
MAX_FAILED_PAGES = 3
#: settings that must never hold a key
KEY_SETTINGS = ("LLM_API_KEY", "OPENAI_API_KEY")


class InvalidAnswer(ValueError):
    """The model's answer is not JSON valid for the schema."""


def load_schema(value: Any) -> dict[str, Any] | None:
    """``LLM_SCHEMA``: a dict, JSON text, or the path of a JSON file; None for the
    default schema; ``""``/``"off"``/``"none"``/``False`` for a free-text answer.

    >>> load_schema('{"type": "object"}'), load_schema("off"), load_schema(None) == DEFAULT_SCHEMA
    ({'type': 'object'}, None, True)
    """
    if value is None:
        return DEFAULT_SCHEMA
    if value is False or (isinstance(value, str) and value.strip().lower() in ("", "off", "none", "false")):
        return None
    if isinstance(value, dict):
        schema = value
    elif isinstance(value, str):
        text = value.strip()
        if not text.startswith("{"):
            path = Path(text).expanduser()
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise ValueError(f"LLM_SCHEMA={value!r} is neither JSON nor a readable file: {exc}") from None
        try:
            schema = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"LLM_SCHEMA={value!r} is not valid JSON: {exc}") from None
    else:
        raise ValueError(f"LLM_SCHEMA must be a JSON schema (dict, JSON text or file path), got {value!r}")
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise ValueError(f"LLM_SCHEMA must describe a JSON object (type: object), got {value!r}")
    try:
        check_schema(schema)
    except ValueError as exc:
        raise ValueError(f"LLM_SCHEMA is not a usable JSON schema: {exc}") from None
    return schema


def parse_answer(text: str | None, schema: dict[str, Any] | None) -> dict[str, Any]:
    """The extraction in an answer: the JSON object (checked against ``schema``), or
    ``{"text": answer}`` without a schema. Raises :class:`InvalidAnswer`.

    >>> parse_answer('```json\\n{"a": 1}\\n```', {"type": "object"})
    {'a': 1}
    >>> parse_answer("plain words", None)
    {'text': 'plain words'}
    """
    if text is None or not text.strip():
        raise InvalidAnswer("empty answer")
    if schema is None:
        return {"text": text}
    body = text.strip()
    if body.startswith("```"):  # models asked for JSON still fence it now and then
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise InvalidAnswer(f"answer is not JSON ({exc}): {text[:80]!r}") from None
    if not isinstance(data, dict):
        raise InvalidAnswer(f"answer is JSON {type(data).__name__}, not an object")
    errors = schema_errors(data, schema)
    if errors:
        raise InvalidAnswer("answer does not match LLM_SCHEMA: " + "; ".join(errors[:5]))
    return data


class LLMExtractor:
    """Extracts each page with one chat-completions call (see the module docstring).

    ``version`` (part of the cache identity) is the model plus a hash of the prompts
    and the schema: changing any of them re-extracts every page on the next run, once.
    Temperature and max tokens are not part of it.
    """

    name = "llm"
    #: the stage leaves timeouts to us: EXTRACTOR_TIMEOUT applies to each attempt,
    #: not to the retries and rate-limit waits of one page together
    own_timeout = True

    def __init__(
        self,
        client: Any,
        *,
        model: str,
        system_prompt: str = DEFAULT_SYSTEM_PROMPT,
        prompt: str = DEFAULT_PROMPT,
        schema: dict[str, Any] | None = DEFAULT_SCHEMA,
        response_format: str = SETTINGS["LLM_RESPONSE_FORMAT"],
        temperature: float = SETTINGS["LLM_TEMPERATURE"],
        max_tokens: int = SETTINGS["LLM_MAX_TOKENS"],
        limiter: RateLimiter | None = None,
        max_retries: int = SETTINGS["LLM_MAX_RETRIES"],
        retry_base_delay: float = RETRY_BASE_DELAY,
        retry_max_delay: float = RETRY_MAX_DELAY,
        invalid_retries: int = INVALID_RETRIES,
        max_failed_pages: int = MAX_FAILED_PAGES,
        prices: dict[str, Any] | None = None,
        stats: StatsCollector | None = None,
        sleep: Any = asyncio.sleep,
    ) -> None:
        if not model:
            raise ValueError("LLM_MODEL must name a model")
        if "{content}" not in prompt:
            raise ValueError(f"LLM_PROMPT must contain {{content}} (the page), got {prompt[:80]!r}")
        if response_format not in RESPONSE_FORMATS:
            raise ValueError(
                f"LLM_RESPONSE_FORMAT must be one of {', '.join(RESPONSE_FORMATS)}, got {response_format!r}"
            )
        if schema is None:
            response_format = "text"
        elif response_format == "text":
            raise ValueError("LLM_RESPONSE_FORMAT=text needs LLM_SCHEMA=off (a schema needs a JSON answer)")
        if max_tokens < 1:
            raise ValueError(f"LLM_MAX_TOKENS must be at least 1, got {max_tokens!r}")
        if not 0 <= temperature <= 2:
            raise ValueError(f"LLM_TEMPERATURE must be between 0 and 2, got {temperature!r}")
        if max_retries < 0:
            raise ValueError(f"LLM_MAX_RETRIES must be at least 0, got {max_retries!r}")
        self.client = client
        self.model = model
        self.schema = schema
        self.response_format = response_format
        if response_format == "json_object" and schema is not None:
            # the endpoint only promises JSON: the schema goes into the instructions
            system_prompt += "\n\nAnswer with one JSON object that follows this JSON schema:\n" + json.dumps(schema)
        self.system_prompt = system_prompt
        self.prompt = prompt
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.limiter = limiter or RateLimiter()
        self.max_retries = max_retries
        self.retry_base_delay = retry_base_delay
        self.retry_max_delay = retry_max_delay
        self.invalid_retries = invalid_retries
        self.max_failed_pages = max_failed_pages
        #: pages in a row (as their calls ended) whose every retry failed in transport
        self.failed_in_row = 0
        self.price = self._price(prices or {}, model)
        self.stats = stats
        self.sleep = sleep
        identity = json.dumps([system_prompt, prompt, schema, response_format], sort_keys=True)
        self.version = f"{model}:{sha256_hex(identity)[:12]}"
        self.tokens_sent = 0
        self.tokens_received = 0
        self.tokens_estimated = 0  # estimated prompt tokens of the answered requests

    @staticmethod
    def _price(prices: dict[str, Any], model: str) -> tuple[float, float] | None:
        if model not in prices:
            return None
        value = prices[model]
        try:
            price_in, price_out = (float(v) for v in value)
        except (TypeError, ValueError):
            raise ValueError(
                f"LLM_PRICES[{model!r}] must be [input, output] USD per million tokens, got {value!r}"
            ) from None
        return price_in, price_out

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> LLMExtractor:
        settings = typed(crawler.settings)
        for name in KEY_SETTINGS:
            if crawler.settings.get(name):
                raise ValueError(
                    f"Setting {name} is refused: put the API key in the environment variable {LLM_KEY_ENV}"
                )
        base_url = settings.get("LLM_BASE_URL")
        if urlsplit(base_url).scheme not in ("http", "https") or not urlsplit(base_url).hostname:
            raise ValueError(
                f"LLM_BASE_URL={base_url!r} must be an http:// or https:// URL, like http://localhost:11434/v1"
            )
        is_openai = urlsplit(base_url).hostname == OPENAI_HOST
        # OPENAI_API_KEY goes to OpenAI only, so an OpenAI key never reaches a local or
        # third-party server; LLM_API_KEY goes to whichever endpoint is set
        key_env = LLM_KEY_ENV if os.environ.get(LLM_KEY_ENV) or not is_openai else OPENAI_KEY_ENV
        api_key = from_env(key_env)  # registered: masked wherever text leaves the process
        dry_run = run_choices(crawler).dry_run
        if not api_key and is_openai and not dry_run:
            raise ValueError(
                f"LLM_BASE_URL is OpenAI's API and neither {LLM_KEY_ENV} nor {OPENAI_KEY_ENV} holds an API key "
                "in the environment"
            )
        timeout = settings.getfloat("EXTRACTOR_TIMEOUT")
        # local servers (Ollama, vLLM, llama.cpp) need no key; the client wants one
        client = openai.AsyncOpenAI(api_key=api_key or "no-key", base_url=base_url, max_retries=0, timeout=timeout)
        rpm = settings.getfloat("LLM_REQUESTS_PER_MIN")
        tpm = settings.getfloat("LLM_TOKENS_PER_MIN")
        for name, value in (("LLM_REQUESTS_PER_MIN", rpm), ("LLM_TOKENS_PER_MIN", tpm)):
            if value < 0:
                raise ValueError(f"{name} must be >= 0 (0: no limit), got {value!r}")
        extractor = cls(
            client,
            model=settings.get("LLM_MODEL") or "",
            system_prompt=settings.get("LLM_SYSTEM_PROMPT") or DEFAULT_SYSTEM_PROMPT,
            prompt=settings.get("LLM_PROMPT") or DEFAULT_PROMPT,
            schema=load_schema(settings.get("LLM_SCHEMA")),
            response_format=settings.get("LLM_RESPONSE_FORMAT"),
            temperature=settings.getfloat("LLM_TEMPERATURE"),
            max_tokens=settings.getint("LLM_MAX_TOKENS"),
            limiter=RateLimiter(rpm, tpm),
            max_retries=settings.getint("LLM_MAX_RETRIES"),
            prices=settings.getdict("LLM_PRICES"),
            stats=crawler.stats,
        )
        crawler.signals.connect(extractor.run_report, signal=crawler_signals.run_report)
        logger.info(
            "LLM extractor: model %(model)s at %(url)s, version %(version)s",
            {"model": extractor.model, "url": base_url, "version": extractor.version},
        )
        return extractor

    # -- the request --------------------------------------------------------------

    def messages(self, url: str, content: str) -> list[dict[str, str]]:
        user = self.prompt.replace("{url}", url).replace("{content}", content)
        return [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": user}]

    def estimate_tokens(self, url: str, content: str) -> int:
        """Prompt tokens a call for this page would send (estimated offline)."""
        return estimate_chat_tokens(self.messages(url, content))

    def request(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        """The chat-completions arguments for ``messages``."""
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.response_format == "json_schema":
            arguments["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "extraction", "schema": self.schema},
            }
        elif self.response_format == "json_object":
            arguments["response_format"] = {"type": "json_object"}
        return arguments

    async def extract(self, url: str, content: str) -> dict[str, Any]:
        messages = self.messages(url, content)
        estimated = estimate_chat_tokens(messages)
        arguments = self.request(messages)
        failures = 0  # transport failures (429, 5xx, timeouts) so far
        invalid = 0  # invalid answers so far
        while True:
            ticket = await self.limiter.acquire(estimated + self.max_tokens)
            self._inc("llm/requests")
            try:
                response = await self.client.chat.completions.create(**arguments)
            except openai.APIError as exc:
                reason = retry_reason(exc)
                if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError | openai.NotFoundError):
                    raise ExtractorUnavailable(f"{self.model}: {api_error(exc)}") from None
                if error_code(exc) == "insufficient_quota":  # no credit left: no retry can succeed
                    raise ExtractorUnavailable(f"{self.model}: {api_error(exc)}") from None
                if reason is None or failures >= self.max_retries:
                    if reason == "connection":  # every attempt for this page: the endpoint is down
                        raise ExtractorUnavailable(
                            f"cannot reach {self.client.base_url}: {api_error(exc)} (after {failures} retries)"
                        ) from None
                    if reason is not None:
                        self._failed_page(exc, failures)
                    raise RuntimeError(f"{api_error(exc)} (after {failures} retries)") from None
                failures += 1
                delay = retry_delay(exc, failures, base=self.retry_base_delay, cap=self.retry_max_delay)
                self._retry(reason)
                logger.info(
                    "LLM call for %(url)s failed (%(reason)s), retry %(n)d of %(max)d in %(delay).1fs",
                    {"url": url, "reason": reason, "n": failures, "max": self.max_retries, "delay": delay},
                )
                await self.sleep(delay)
                continue
            self.failed_in_row = 0  # the endpoint answered
            choice = response.choices[0] if response.choices else None
            answer = choice.message.content if choice is not None else None
            sent, received = self._account(response, estimated, answer)
            self.limiter.settle(ticket, sent + received)
            if choice is not None and choice.finish_reason == "length":
                # asking again with the same limit would be cut again, and paid again
                self._inc("llm/invalid_answers")
                raise InvalidAnswer(f"answer cut at LLM_MAX_TOKENS={self.max_tokens}; raise it")
            try:
                return parse_answer(answer, self.schema)
            except InvalidAnswer as exc:
                self._inc("llm/invalid_answers")
                if invalid >= self.invalid_retries:
                    raise
                invalid += 1
                self._retry("invalid_answer")
                logger.info("Invalid answer for %(url)s (%(error)s), asking again", {"url": url, "error": exc})

    def _failed_page(self, exc: openai.APIError, failures: int) -> None:
        """A page's calls failed every retry in transport (429, 5xx, timeouts): one more
        in a row. ``max_failed_pages`` in a row and the endpoint is taken as down
        (:class:`ExtractorUnavailable`: the run stops extracting, the pages left wait for
        the next run) rather than each page waiting out its retries."""
        self.failed_in_row += 1
        if self.max_failed_pages and self.failed_in_row >= self.max_failed_pages:
            raise ExtractorUnavailable(
                f"{self.client.base_url} failed {self.failed_in_row} pages in a row, each after {failures} retries "
                f"(the last: {api_error(exc)})"
            ) from None

    def _account(self, response: Any, estimated: int, answer: str | None) -> tuple[int, int]:
        """Count a response's tokens: the usage it reports, or (some servers report
        none) the estimates, so rate limits and costs still hold."""
        usage = getattr(response, "usage", None)
        sent = int(getattr(usage, "prompt_tokens", 0) or 0)
        received = int(getattr(usage, "completion_tokens", 0) or 0)
        if sent:
            self.tokens_estimated += estimated
        else:
            self._inc("llm/usage_estimated")
            sent, received = estimated, estimate_tokens(answer or "")
        self.tokens_sent += sent
        self.tokens_received += received
        self._inc("llm/tokens_sent", sent)
        self._inc("llm/tokens_received", received)
        return sent, received

    def _inc(self, stat: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(stat, count)

    def _retry(self, reason: str) -> None:
        self._inc("llm/retries")
        self._inc(f"llm/retry_reason/{reason}")

    # -- reporting -----------------------------------------------------------------

    def cost(self, sent: float, received: float) -> float | None:
        """Estimated USD for these tokens at ``LLM_PRICES``, None without a price."""
        if self.price is None:
            return None
        return round(sent * self.price[0] / 1e6 + received * self.price[1] / 1e6, 6)

    def progress_note(self) -> str:
        """Appended to the extraction progress lines."""
        note = f"{self.tokens_sent:,} tokens sent, {self.tokens_received:,} received"
        cost = self.cost(self.tokens_sent, self.tokens_received)
        return note + (f", ${cost:.4f}" if cost is not None else "")

    async def run_report(self, cache: Any, report: dict[str, Any]) -> None:
        """Adds the ``llm`` section to the run report; closes the HTTP client."""
        factor = calibration(self.tokens_sent, self.tokens_estimated)
        tokens = report.get("tokens", {})
        saved_unchanged = round(tokens.get("saved_unchanged_estimate", 0) * factor)
        saved_boilerplate = round(tokens.get("saved_boilerplate_estimate", 0) * factor)
        section: dict[str, Any] = {
            "model": self.model,
            "requests": self._stat("llm/requests"),
            "retries": self._stat("llm/retries"),
            "invalid_answers": self._stat("llm/invalid_answers"),
            "tokens_sent": self.tokens_sent,
            "tokens_received": self.tokens_received,
            "tokens_saved_unchanged": saved_unchanged,
            "tokens_saved_boilerplate": saved_boilerplate,
            "estimate_calibration": factor,
            "cost_usd": self.cost(self.tokens_sent, self.tokens_received),
            "cost_saved_usd": self.cost(saved_unchanged + saved_boilerplate, 0),
        }
        if "dry_run" in report:
            pages = int(report["dry_run"].get("pages", 0))
            would_send = round((report["dry_run"].get("tokens") or 0) * factor)
            section["dry_run_cost_usd"] = self.cost(would_send, 0)  # the prompts
            section["dry_run_cost_max_usd"] = self.cost(would_send, pages * self.max_tokens)  # + longest answers
            if section["dry_run_cost_usd"] is not None:
                logger.info(
                    "Dry run: %(pages)s would cost about $%(cost).4f for %(their)s prompts, "
                    "at most $%(max).4f with answers of LLM_MAX_TOKENS",
                    {
                        "pages": plural(pages, "call"),
                        "their": "its" if pages == 1 else "their",
                        "cost": section["dry_run_cost_usd"],
                        "max": section["dry_run_cost_max_usd"],
                    },
                )
        report["llm"] = section
        if self.stats is not None:
            self.stats.set_value("llm/tokens_saved_unchanged", saved_unchanged)
            self.stats.set_value("llm/tokens_saved_boilerplate", saved_boilerplate)
            if section["cost_usd"] is not None:
                self.stats.set_value("llm/cost_usd", section["cost_usd"])
        cost = section["cost_usd"]
        logger.info(
            "LLM: %(req)s, %(retries)s, %(sent)s sent, %(recv)s received%(cost)s; "
            "saved about %(saved_u)s tokens on unchanged pages and %(saved_b)s on boilerplate",
            {
                "req": plural(section["requests"], "request"),
                "retries": plural(section["retries"], "retry", "retries"),
                "sent": plural(self.tokens_sent, "token", grouped=True),
                "recv": f"{self.tokens_received:,}",
                "cost": f", ${cost:.4f}" if cost is not None else " (no LLM_PRICES entry for the model)",
                "saved_u": f"{saved_unchanged:,}",
                "saved_b": f"{saved_boilerplate:,}",
            },
        )
        await self.client.close()

    def _stat(self, name: str) -> int:
        return int(self.stats.get_value(name, 0) or 0) if self.stats is not None else 0

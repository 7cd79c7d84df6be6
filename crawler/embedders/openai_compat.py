"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint."""

from __future__ import annotations

import asyncio
import logging
import os
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from crawler.config import typed
from crawler.defaults import SETTINGS
from crawler.embedders import EmbeddingRejected
from crawler.support.ratelimit import RateLimiter
from crawler.support.secrets import EMBEDDER_KEY_ENV, OPENAI_KEY_ENV, from_env

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: the host of OpenAI's API: the only one OPENAI_API_KEY is sent to
OPENAI_HOST = "api.openai.com"
#: statuses that refuse the texts themselves (too long...): the sync isolates them
REJECTED_STATUSES = (400, 413, 422)


#: retries of a failed request (429, 5xx, timeouts, connection errors), and the seconds
#: one attempt may take
MAX_RETRIES = 5
TIMEOUT = 60.0


class OpenAIEmbedder:
    """Calls ``POST {EMBEDDER_BASE_URL}/embeddings`` with the ``openai`` client: OpenAI
    itself, or Ollama (``http://localhost:11434/v1``), vLLM, TEI, LiteLLM...

    ``-s EMBEDDER=crawler.embedders.openai_compat.OpenAIEmbedder -s EMBEDDER_MODEL=...``;
    settings in docs/settings.md. ``OPENAI_API_KEY`` is sent to OpenAI's endpoint only.
    Retries, rate limit and backoff are the LLM extractor's (the client's own are off). A
    400, 413 or 422 raises :class:`crawler.embedders.EmbeddingRejected`. The model (and
    dimensions) is the version, not the endpoint: the same model elsewhere makes the same
    vectors.
    """

    name = "openai-compatible"

    def __init__(
        self,
        base_url: str = SETTINGS["EMBEDDER_BASE_URL"],
        model: str = SETTINGS["EMBEDDER_MODEL"],
        api_key: str | None = None,
        *,
        dimensions: int = SETTINGS["EMBEDDER_DIMENSIONS"],
        batch_size: int = SETTINGS["EMBEDDER_BATCH_SIZE"],
        rate_limit_per_min: int = SETTINGS["EMBEDDER_RATE_LIMIT_PER_MIN"],
        max_retries: int = MAX_RETRIES,
        timeout: float = TIMEOUT,
        retry_base_delay: float = 1.0,
        retry_max_delay: float = 60.0,
        stats: Any = None,
    ) -> None:
        import openai  # imported here: only this embedder needs it

        if not model:
            raise ValueError("EMBEDDER_MODEL must name an embedding model")
        if batch_size < 1:
            raise ValueError(f"EMBEDDER_BATCH_SIZE must be at least 1, got {batch_size!r}")
        if rate_limit_per_min < 0:
            raise ValueError(f"EMBEDDER_RATE_LIMIT_PER_MIN must be 0 (no limit) or more, got {rate_limit_per_min!r}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {max_retries!r}")
        if not api_key:
            if urlsplit(base_url).hostname == "api.openai.com":
                raise ValueError(f"EMBEDDER_BASE_URL={base_url!r} needs an API key")
            api_key = "unused"  # local servers ignore it; the client requires one
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.version = model + (f"-d{dimensions}" if dimensions else "")
        self.limiter = RateLimiter(requests_per_minute=rate_limit_per_min)
        self.max_retries = max_retries
        self.retry_base_delay = retry_base_delay
        self.retry_max_delay = retry_max_delay
        self.stats = stats
        self.sleep = asyncio.sleep  # tests record the waits instead
        self.client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> OpenAIEmbedder:
        settings = typed(crawler.settings)
        base_url = settings.get("EMBEDDER_BASE_URL")
        is_openai = urlsplit(base_url).hostname == OPENAI_HOST
        # as the LLM extractor: OPENAI_API_KEY goes to OpenAI only; EMBEDDER_API_KEY to
        # whichever endpoint is set
        key_env = EMBEDDER_KEY_ENV if os.environ.get(EMBEDDER_KEY_ENV) or not is_openai else OPENAI_KEY_ENV
        api_key = from_env(key_env) or None  # registered: masked in logs and errors
        if not api_key and is_openai:
            raise ValueError(
                f"EMBEDDER_BASE_URL={base_url!r} needs an API key in the environment variable "
                f"{EMBEDDER_KEY_ENV} or {OPENAI_KEY_ENV}"
            )
        return cls(
            base_url,
            settings.get("EMBEDDER_MODEL"),
            api_key,
            dimensions=settings.getint("EMBEDDER_DIMENSIONS"),
            batch_size=settings.getint("EMBEDDER_BATCH_SIZE"),
            rate_limit_per_min=settings.getint("EMBEDDER_RATE_LIMIT_PER_MIN"),
            stats=crawler.stats,
        )

    async def embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            response = await self._create(batch)
            data = sorted(response.data, key=lambda item: item.index)
            if len(data) != len(batch):
                raise ValueError(f"{self.model} returned {len(data)} embeddings for {len(batch)} texts")
            vectors.extend([float(x) for x in item.embedding] for item in data)
        return vectors

    async def _create(self, batch: list[str]) -> Any:
        """One embeddings request for ``batch``, retried as the LLM extractor retries."""
        import openai

        from crawler.support.openai_errors import api_error, retry_delay, retry_reason

        extra: dict[str, Any] = {"dimensions": self.dimensions} if self.dimensions else {}
        failures = 0
        while True:
            ticket = await self.limiter.acquire()
            if ticket.waited:
                logger.info("Embedding rate limit: waited %(s).1fs", {"s": ticket.waited})
            try:
                return await self.client.embeddings.create(
                    model=self.model, input=batch, encoding_format="float", **extra
                )
            except openai.APIError as exc:
                if isinstance(exc, openai.APIStatusError) and exc.status_code in REJECTED_STATUSES:
                    raise EmbeddingRejected(api_error(exc)) from exc
                reason = retry_reason(exc)
                if reason is None or failures >= self.max_retries:
                    raise
                failures += 1
                delay = retry_delay(exc, failures, base=self.retry_base_delay, cap=self.retry_max_delay)
                if self.stats is not None:
                    self.stats.inc_value("embedder/retries")
                    self.stats.inc_value(f"embedder/retry_reason/{reason}")
                logger.info(
                    "Embedding request failed (%(reason)s), retry %(n)d of %(max)d in %(delay).1fs",
                    {"reason": reason, "n": failures, "max": self.max_retries, "delay": delay},
                )
                await self.sleep(delay)

    async def close(self) -> None:
        await self.client.close()

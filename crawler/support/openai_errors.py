"""What an error of the ``openai`` client means for the caller: retry it or not (and
after how long), and the server's own message. Shared by the LLM extractor and the
OpenAI-compatible embedder, which both run their own retries (the client's are off) so
that every attempt is counted, rate-limited and logged the same way."""

from __future__ import annotations

import time

import openai

from crawler.support.backoff import backoff_delay, parse_retry_after
from crawler.support.secrets import mask_error


def retry_reason(exc: BaseException) -> str | None:
    """Why a failed request is worth retrying (a stat suffix), or None.

    >>> retry_reason(ValueError()) is None
    True
    """
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection"
    if isinstance(exc, openai.APIStatusError) and (exc.status_code in (408, 409, 429) or exc.status_code >= 500):
        return str(exc.status_code)
    return None


def retry_delay(exc: BaseException, attempt: int, *, base: float, cap: float) -> float:
    """Seconds before retry number ``attempt``: the server's ``Retry-After`` (or
    ``retry-after-ms``) when it sent one, else exponential backoff with jitter."""
    headers = exc.response.headers if isinstance(exc, openai.APIStatusError) else {}
    return backoff_delay(attempt, base=base, cap=cap, retry_after=parse_retry_after(headers, now=time.time()))


def api_error(exc: openai.APIError) -> str:
    """The server's own error message, shortened, without the request, keys masked.

    >>> import httpx2
    >>> request = httpx2.Request("POST", "http://x/v1/chat/completions")
    >>> api_error(openai.APIConnectionError(request=request))
    'Connection error.'
    """
    body = exc.body if isinstance(exc.body, dict) else {}
    message = body.get("message") or (body.get("error") or {}).get("message") if body else None
    status = getattr(exc, "status_code", None)
    text = str(message or exc)
    if exc.__cause__ is not None and not status:  # a connection error: say why
        text += f" ({type(exc.__cause__).__name__}: {exc.__cause__})"
    text = mask_error(text)  # before shortening: a cut key would no longer be recognised
    return f"HTTP {status}: {text[:300]}" if status else text[:300]


def error_code(exc: openai.APIError) -> str | None:
    """The ``code`` of an OpenAI error body (``insufficient_quota``...)."""
    body = exc.body if isinstance(exc.body, dict) else {}
    code = body.get("code") or (body.get("error") or {}).get("code") if body else None
    return code if isinstance(code, str) else None

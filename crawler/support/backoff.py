"""Retry delays for HTTP APIs: exponential backoff with jitter, ``Retry-After`` honoured."""

from __future__ import annotations

import random
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping


def parse_retry_after(headers: Mapping[str, str], *, now: float) -> float | None:
    """Seconds the server asked to wait: ``retry-after-ms`` (OpenAI's), ``Retry-After``
    in seconds or as an HTTP date (``now`` is the current Unix time). None if absent
    or unreadable.

    >>> parse_retry_after({"retry-after": "7"}, now=0), parse_retry_after({"retry-after-ms": "250"}, now=0)
    (7.0, 0.25)
    >>> parse_retry_after({"retry-after": "Thu, 01 Jan 1970 00:00:30 GMT"}, now=10)
    20.0
    >>> parse_retry_after({"retry-after": "soon"}, now=0) is None
    True
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    value = lowered.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - now)
    except (TypeError, ValueError, IndexError):
        return None


def backoff_delay(
    attempt: int,
    *,
    base: float,
    cap: float,
    retry_after: float | None = None,
    rng: random.Random | None = None,
) -> float:
    """Seconds to wait before retry number ``attempt`` (1 for the first retry): what the
    server asked for if it did (up to ``cap``), else ``base * 2**(attempt-1)`` with
    jitter of -25%..+25%, at most ``cap``.

    >>> backoff_delay(1, base=1, cap=60, retry_after=3)
    3.0
    >>> backoff_delay(1, base=1, cap=60, retry_after=600)
    60.0
    >>> 0.75 <= backoff_delay(1, base=1, cap=60) <= 1.25, 6 <= backoff_delay(4, base=1, cap=60) <= 10
    (True, True)
    >>> backoff_delay(20, base=1, cap=60)
    60.0
    """
    if retry_after is not None:
        return float(min(retry_after, cap))
    delay = base * 2 ** min(attempt - 1, 30)
    jitter = (rng or random).uniform(0.75, 1.25)
    return float(min(cap, delay * jitter))

"""Counts in words: "1 page", "3 pages", for every line a user reads."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None, *, grouped: bool = False) -> str:
    """``count`` and ``noun``, in the plural (``many``, else ``noun`` + "s") unless
    ``count`` is 1; ``grouped``: thousands separated by commas.

    >>> plural(1, "time"), plural(3, "time"), plural(0, "page")
    ('1 time', '3 times', '0 pages')
    >>> plural(1, "process", "processes"), plural(2, "process", "processes")
    ('1 process', '2 processes')
    >>> plural(1, "page's", "pages'"), plural(1200, "token", grouped=True)
    ("1 page's", '1,200 tokens')
    """
    number = f"{count:,}" if grouped else str(count)
    return f"{number} {noun if count == 1 else many or noun + 's'}"

"""The spiders' ``-a NAME=VALUE`` arguments read as lists, booleans, whole numbers and
one of a few words, and an argument the docs spider ignores named."""

from __future__ import annotations

import difflib
from typing import Any

from crawler.support.mistakes import Mistake


def split_arg(value: str | list[str] | None) -> list[str]:
    """A comma-separated spider argument as a list.

    >>> split_arg(" a, b ,,c ")
    ['a', 'b', 'c']
    """
    if not value:
        return []
    if isinstance(value, list):
        return value
    return [part.strip() for part in value.split(",") if part.strip()]


def bool_arg(name: str, value: Any) -> bool:
    """
    >>> bool_arg("sitemaps", "false"), bool_arg("sitemaps", True)
    (False, True)
    """
    if isinstance(value, bool):
        return value
    lowered = str(value).strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"Spider argument {name} must be true or false, got {value!r}")


def choice_arg(name: str, value: Any, choices: tuple[str, ...]) -> str | None:
    """One of ``choices`` (any case), or None when not given.

    >>> choice_arg("scope", " Site ", ("path", "site")), choice_arg("scope", None, ("path", "site"))
    ('site', None)
    >>> choice_arg("scope", "sites", ("path", "site"))
    Traceback (most recent call last):
    ...
    ValueError: Spider argument scope must be path or site, got 'sites'
    """
    if value is None or value == "":
        return None
    lowered = str(value).strip().lower()
    if lowered in choices:
        return lowered
    raise ValueError(f"Spider argument {name} must be {' or '.join(choices)}, got {value!r}")


#: the docs spider's own arguments (``-a NAME=VALUE``), and a run's choices any spider
#: takes (:mod:`crawler.choices`)
ARGUMENTS = ("start_urls", "allowed_domains", "scope", "max_depth", "max_pages", "include", "exclude", "sitemaps")
CHOICES = ("redo", "dry_run")
KNOWN = (*ARGUMENTS, *CHOICES)


#: what Scrapy's components read of a spider's attributes: an ``-a`` of these names sets them
SCRAPY_ATTRIBUTES = (
    "user_agent",
    "http_user",
    "http_pass",
    "http_auth_domain",
    "download_delay",
    "download_timeout",
    "download_maxsize",
    "download_warnsize",
    "max_concurrent_requests",
    "handle_httpstatus_list",
    "handle_httpstatus_all",
)


def unknown_argument(name: str, spider: type) -> Mistake | None:
    """The spider argument ``name`` as a mistake (ignored), or None when something
    reads it: an argument of this spider, a run's choice, an attribute of the spider's
    class (a subclass's own), one Scrapy reads (``http_user``...) or a scheduler's
    private one (``_job``). A near miss of a known one is named.

    >>> from crawler.spiders.docs import DocsSpider
    >>> unknown_argument("maxpages", DocsSpider).line
    'Unknown spider argument maxpages, ignored (did you mean max_pages?)'
    >>> unknown_argument("http_user", DocsSpider), unknown_argument("redo", DocsSpider)
    (None, None)
    >>> unknown_argument("dryrun", DocsSpider).meant, unknown_argument("scop", DocsSpider).meant
    ('dry_run', 'scope')
    >>> unknown_argument("colour", DocsSpider).line
    'Unknown spider argument colour, ignored (every argument: docs/commands.md)'
    """
    if name in KNOWN or name in SCRAPY_ATTRIBUTES or name.startswith("_") or hasattr(spider, name):
        return None  # (``_job``: scrapyd's)
    close = difflib.get_close_matches(name.lower(), (*KNOWN, *SCRAPY_ATTRIBUTES), n=1, cutoff=0.75)
    if close:
        return Mistake("spider argument", name, meant=close[0])
    return Mistake("spider argument", name, hint="every argument: docs/commands.md")


def int_arg(name: str, value: Any) -> int | None:
    if value in (None, ""):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"Spider argument {name} must be a whole number, got {value!r}") from None
    if number < 0:
        raise ValueError(f"Spider argument {name} must be 0 or more, got {number}")
    return number

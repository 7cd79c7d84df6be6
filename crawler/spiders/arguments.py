"""The spiders' ``-a NAME=VALUE`` arguments read as lists, booleans, whole numbers and
one of a few words, and a misspelt argument of the docs spider named."""

from __future__ import annotations

import difflib
from typing import Any


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


def misspelt_argument(name: str, spider: type) -> str | None:
    """The docs spider's argument ``name`` (not one of them) was likely meant to be,
    or None. Any other ``-a`` stays a spider attribute as in Scrapy (``http_user``,
    ``user_agent``...): only a near miss of an argument of this spider is one.

    >>> from crawler.spiders.docs import DocsSpider
    >>> misspelt_argument("maxpages", DocsSpider), misspelt_argument("exclud", DocsSpider)
    ('max_pages', 'exclude')
    >>> misspelt_argument("http_user", DocsSpider), misspelt_argument("redo", DocsSpider)
    (None, None)
    >>> misspelt_argument("dryrun", DocsSpider), misspelt_argument("scop", DocsSpider)
    ('dry_run', 'scope')
    """
    if name in KNOWN or hasattr(spider, name):
        return None
    close = difflib.get_close_matches(name.lower(), KNOWN, n=1, cutoff=0.75)
    return close[0] if close else None


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

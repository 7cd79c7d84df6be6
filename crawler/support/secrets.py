"""The secrets this process read from the environment, and :func:`mask`, which
replaces them in any text about to leave the process (a log line, a stored error, a
run report).

Keys read with :func:`from_env` are registered; :func:`mask` replaces each as it could
appear (as is, URL-, JSON-, repr- or HTML-escaped, in base64, any case);
:func:`mask_error` also masks the shape of common unregistered keys, and
:func:`mask_credentials` the password of a connection string. Values shorter than
:data:`MIN_LENGTH` are not registered: no real key is that short, and masking ``"test"``
everywhere would wreck every log line. Masking of logs is a log-record factory, not a
handler filter, because Scrapy reconfigures handlers and a logger's filter misses its
children's records.
"""

from __future__ import annotations

import base64
import html
import json
import logging
import os
import re
import threading
from typing import Any
from urllib.parse import quote, quote_plus, unquote

logger = logging.getLogger(__name__)

#: shorter values are not masked (see the module docstring)
MIN_LENGTH = 8
REPLACEMENT = "***"
#: the environment variables that hold keys and connection strings: never settings,
#: whose values reach logs, cron mails and process lists
LLM_KEY_ENV = "LLM_API_KEY"
EMBEDDER_KEY_ENV = "EMBEDDER_API_KEY"
QDRANT_KEY_ENV = "QDRANT_API_KEY"
#: OpenAI's own key, sent to OpenAI's API only (when LLM_API_KEY or EMBEDDER_API_KEY is unset)
OPENAI_KEY_ENV = "OPENAI_API_KEY"
DSN_ENV = "EXTRACTED_DOCS_DSN"
REDIS_URL_ENV = "FRONTIER_REDIS_URL"
KEY_ENVS = (LLM_KEY_ENV, EMBEDDER_KEY_ENV, QDRANT_KEY_ENV, OPENAI_KEY_ENV)
CONNECTION_ENVS = (DSN_ENV, REDIS_URL_ENV)
#: the shape of common API keys (OpenAI's ``sk-…``, ``sk-proj-…``, Stripe's ``sk_live_…``,
#: Mailgun's ``key-…``), in any case, URL-encoded characters included; OpenAI's 401 echoes
#: the key masked with ``*``. ``key-`` needs 16 characters more: "key-value" is no key
KEY_SHAPE_RE = re.compile(r"\b(sk[-_])[A-Za-z0-9_*\-.%+/=~]{4,}|\b(key-)[A-Za-z0-9_*\-.%+/=~]{16,}", re.IGNORECASE)

#: a URL's credentials: everything from ``scheme://`` to the LAST ``@`` before a space or a
#: quote (an unescaped ``@`` in a password is common, and a library quotes the string whole)
CREDENTIALS_RE = re.compile(r"\b([A-Za-z][A-Za-z0-9+.\-]*://)[^\s\"'<>]*@")
#: a keyword DSN's password (``password=…``, quoted or not)
PASSWORD_KEYWORD_RE = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s'\"]+)", re.IGNORECASE)

_lock = threading.Lock()
_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None
#: the forms, lower-case: a quick test (substring search) before the regex
_needles: tuple[str, ...] = ()
_installed = False
_exception_formatter = logging.Formatter()


def _base64_forms(value: bytes) -> set[str]:
    """The base64 text of ``value`` wherever it sits in an encoded string: for each
    of the three alignments, the characters that only its own bytes decide (a byte or
    two at either end may stay visible)."""
    forms: set[str] = set()
    for skip in range(3):
        part = value[skip:]
        part = part[: len(part) - len(part) % 3]
        if len(part) >= 6:
            encoded = base64.b64encode(part).decode("ascii")
            forms.update((encoded, encoded.replace("+", "-").replace("/", "_")))
    return forms


def variants(value: str) -> set[str]:
    """Every form of ``value`` that :func:`mask` replaces.

    >>> {"ab/cd+ef=gh", "ab%2Fcd%2Bef%3Dgh", "ab/cd%2Bef%3Dgh", "YWIvY2QrZWY9"} <= variants("ab/cd+ef=gh")
    True
    """
    forms = {
        value,
        quote(value, safe=""),
        quote(value),
        quote_plus(value),
        quote_plus(value, safe="/"),
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        json.dumps(value)[1:-1].replace("/", "\\/"),  # JSON encoders that escape slashes
        repr(value)[1:-1],
        html.escape(value),
    }
    forms |= _base64_forms(value.encode("utf-8"))
    return {form for form in forms if len(form) >= MIN_LENGTH}


def register(value: str | None, source: str = "", *, warn: bool = True) -> None:
    """Mask ``value`` from now on (``source``, its variable's name, for the warning
    about a value too short to mask; ``warn=False``: no warning)."""
    global _pattern, _needles
    if not value:
        return
    value = value.strip()
    if len(value) < MIN_LENGTH:
        if not warn:
            return
        logger.warning(
            "The secret in %(source)s is shorter than %(n)d characters: it is not masked in logs and stored errors",
            {"source": source or "a setting", "n": MIN_LENGTH},
        )
        return
    with _lock:
        if value in _secrets:
            return
        _secrets.add(value)
        forms = sorted({form for secret in _secrets for form in variants(secret)}, key=len, reverse=True)
        _needles = tuple(form.lower() for form in forms)
        _pattern = re.compile("|".join(re.escape(form) for form in forms), re.IGNORECASE)
        _install()


def from_env(name: str) -> str:
    """The value of the environment variable ``name`` ("" when unset), registered."""
    value = os.environ.get(name, "") if name else ""
    register(value, name)
    return value


def registered() -> frozenset[str]:
    return frozenset(_secrets)


def clear() -> None:
    """Forget every registered value (for tests; the log-record factory stays)."""
    global _pattern, _needles
    with _lock:
        _secrets.clear()
        _pattern = None
        _needles = ()


def mask(text: str) -> str:
    """``text`` with every registered secret, in each of its forms, replaced.

    >>> register("AIzaSyExample-Key/With+Chars")
    >>> mask("key=AIzaSyExample-Key%2FWith%2BChars, AIZASYEXAMPLE-KEY/WITH+CHARS")
    'key=***, ***'
    >>> clear()
    """
    return _sub(_pattern, text)


def _sub(pattern: re.Pattern[str] | None, text: str) -> str:
    if pattern is None or not text:
        return text
    lowered = text.lower()
    if not any(needle in lowered for needle in _needles):  # most texts: no regex run at all
        return text
    return pattern.sub(REPLACEMENT, text)


def mask_error(text: str) -> str:
    """:func:`mask`, then the key shapes: for error messages (a server's echo of a
    key), not for log lines in general (the shape rule would also hit URLs such as
    ``/guide/key-concepts``).

    >>> mask_error("Incorrect API key provided: SK-PROJ-abc123")
    'Incorrect API key provided: SK-***'
    """
    return KEY_SHAPE_RE.sub(lambda m: (m.group(1) or m.group(2)) + REPLACEMENT, mask(text))


def mask_data(data: Any) -> Any:
    """``data`` (JSON-like: dicts, lists, strings) with :func:`mask` applied to every
    string in it, keys included; ``data`` itself when nothing is registered."""
    if _pattern is None:
        return data
    if isinstance(data, str):
        return mask(data)
    if isinstance(data, dict):
        return {mask_data(key): mask_data(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [mask_data(value) for value in data]
    return data


class MaskedLogRecord(logging.LogRecord):
    """A log record whose message is masked when it is formatted (``getMessage``): the
    cost is paid only for records a handler writes, not for every DEBUG record Scrapy
    creates and no handler wants (a page's whole item in "Scraped from ...")."""

    def getMessage(self) -> str:
        return _sub(_pattern, super().getMessage())


def mask_record(record: logging.LogRecord) -> None:
    """Mask a log record in place: its message when it is formatted (the record becomes
    a :class:`MaskedLogRecord`), its traceback and its stack now (rare, and formatted
    from attributes a formatter reads directly)."""
    pattern = _pattern
    if pattern is None:
        return
    if type(record) is logging.LogRecord:
        record.__class__ = MaskedLogRecord
    if record.exc_info and not record.exc_text:
        text = _exception_formatter.formatException(record.exc_info)
        masked = _sub(pattern, text)
        if masked != text:
            record.exc_text = masked  # what formatters print instead of formatting exc_info
    if record.stack_info:
        record.stack_info = _sub(pattern, record.stack_info)


def _install() -> None:
    """Wrap the log-record factory, once per process (called with the lock held)."""
    global _installed
    if _installed:
        return
    _installed = True
    previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        mask_record(record)
        return record

    logging.setLogRecordFactory(factory)


def mask_credentials(text: str) -> str:
    """``text`` with the credentials of every connection string in it masked, whatever
    its shape: a URL's from ``scheme://`` to the last ``@`` (the user name too: a
    password may hold ``:`` and ``@``), a keyword DSN's ``password=`` value; for a
    message that may quote a DSN or a Redis URL, valid or not.

    >>> mask_credentials('bad URI: "postgresql://user:PASS@[::1:15432/docs"')
    'bad URI: "postgresql://***@[::1:15432/docs"'
    >>> mask_credentials("redis://:Redis@PW@127.0.0.1:6379/0")
    'redis://***@127.0.0.1:6379/0'
    >>> mask_credentials("host=db password='a b\\\\'c' dbname=docs")
    'host=db password=*** dbname=docs'
    >>> mask_credentials("redis://127.0.0.1:6379/0, https://example.com/a")
    'redis://127.0.0.1:6379/0, https://example.com/a'
    """
    text = CREDENTIALS_RE.sub(lambda m: m.group(1) + REPLACEMENT + "@", text)
    return PASSWORD_KEYWORD_RE.sub(lambda m: m.group(1) + REPLACEMENT, text)


def connection_password(dsn: str) -> str | None:
    """The password of a connection string as :func:`mask_credentials` finds it (no
    parser asked: a malformed string has one too); None: it has none.

    >>> connection_password("postgresql://user:PA@SS@[::1:15432/docs")
    'PA@SS'
    >>> connection_password("host=db password='it\\\\'s' user=u")
    "it's"
    >>> connection_password("redis://127.0.0.1/0") is None
    True
    """
    found = re.match(r"\s*[A-Za-z][A-Za-z0-9+.\-]*://(\S*)@", dsn)
    if found:
        _user, colon, password = found.group(1).partition(":")
        return password if colon and password else None
    keyword = PASSWORD_KEYWORD_RE.search(dsn)
    if not keyword:
        return None
    value = keyword.group(2)
    if value.startswith("'"):
        value = re.sub(r"\\(.)", r"\1", value[1:-1] if value.endswith("'") and len(value) > 1 else value[1:])
    return value or None


def register_connection(dsn: str | None, source: str) -> None:
    """Register the password of the connection string ``dsn`` (as written and URL-decoded)."""
    password = connection_password(dsn or "")
    if password:
        register(password, source, warn=False)
        register(unquote(password), source, warn=False)

"""crawler.support.secrets: the keys this process read, masked wherever text leaves it."""

from __future__ import annotations

import base64
import html
import json
import logging
from urllib.parse import quote, quote_plus

import pytest

from crawler.support import secrets

#: shaped like a Google API key, with characters that every encoding changes
KEY = "AIzaSyC9x-Y7w_Q2p/Zr+Lm4=Kq8vTn&'\"<"
PLAIN = "AIzaSyC9xY7wQ2pZrLm4Kq8vTn0"


@pytest.fixture
def key():
    secrets.register(KEY, "TEST_KEY")
    return KEY


@pytest.mark.parametrize(
    "encode",
    [
        pytest.param(lambda k: k, id="as-is"),
        pytest.param(lambda k: quote(k), id="quote"),
        pytest.param(lambda k: quote(k, safe=""), id="quote-safe-none"),
        pytest.param(lambda k: quote_plus(k), id="quote_plus"),
        pytest.param(lambda k: quote(k, safe="").lower(), id="quote-lower-hex"),
        pytest.param(lambda k: json.dumps(k)[1:-1], id="json"),
        pytest.param(lambda k: json.dumps(k).replace("/", "\\/")[1:-1], id="json-escaped-slash"),
        pytest.param(lambda k: repr(k)[1:-1], id="repr"),
        pytest.param(lambda k: html.escape(k), id="html"),
        pytest.param(lambda k: k.upper(), id="upper-case"),
        pytest.param(lambda k: base64.b64encode(k.encode()).decode(), id="base64"),
        pytest.param(lambda k: base64.b64encode(f"user:{k}".encode()).decode(), id="base64-user-key"),
        pytest.param(lambda k: base64.b64encode(f"ab:{k}".encode()).decode(), id="base64-shifted"),
        pytest.param(lambda k: base64.b64encode(f"{k}:".encode()).decode(), id="base64-key-colon"),
        pytest.param(lambda k: base64.urlsafe_b64encode(f"u:{k}".encode()).decode(), id="base64url"),
    ],
)
def test_each_encoding_is_masked(key, encode):
    form = encode(key)
    text = f"HTTP 400: invalid key {form} (see https://example.com/?k={form})"
    masked = secrets.mask(text)
    assert "***" in masked
    assert form not in masked
    # no run of the key's own characters long enough to be useful is left
    for start in range(len(KEY) - 8):
        assert KEY[start : start + 8] not in masked


def test_text_without_a_secret_is_unchanged(key):
    text = "Crawled (200) <GET https://docs.example.com/guide/key-concepts.html>"
    assert secrets.mask(text) == text
    assert secrets.mask_data({"a": [text, 1, None]}) == {"a": [text, 1, None]}


def test_nothing_registered_changes_nothing():
    assert secrets.registered() == frozenset()
    assert secrets.mask(f"{PLAIN} sk-abcdef123") == f"{PLAIN} sk-abcdef123"


def test_several_secrets_and_data(key):
    secrets.register(PLAIN, "OTHER")
    data = {"error": f"{KEY} and {PLAIN}", "history": [{"note": quote(PLAIN + "?")}], KEY: 3}
    assert secrets.mask_data(data) == {"error": "*** and ***", "history": [{"note": "***%3F"}], "***": 3}


def test_short_values_are_not_masked_and_say_so(caplog):
    with caplog.at_level(logging.WARNING):
        secrets.register("abc", "SHORT_KEY")
        secrets.register("", "EMPTY_KEY")  # unset: nothing to say
    assert secrets.registered() == frozenset()
    assert secrets.mask("abc abcdef") == "abc abcdef"  # masking "abc" everywhere would wreck the logs
    assert [r.getMessage() for r in caplog.records] == [
        "The secret in SHORT_KEY is shorter than 8 characters: it is not masked in logs and stored errors"
    ]


def test_from_env_registers(monkeypatch):
    monkeypatch.setenv("SOME_TOKEN", PLAIN)
    assert secrets.from_env("SOME_TOKEN") == PLAIN
    assert secrets.from_env("NOT_SET_AT_ALL_HERE") == ""
    assert secrets.mask(f"token={PLAIN}") == "token=***"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Incorrect API key provided: sk-abc123456", "Incorrect API key provided: sk-***"),
        ("Incorrect API key provided: SK-ABC123456.", "Incorrect API key provided: SK-***"),
        ("key=sk-proj-ab%2Fcd%2Bef rest", "key=sk-*** rest"),
        ("sk_live_51Habcdef", "sk_***"),
        ("key-3ax6xnjp29jd6fds4gc373sgvjxteol0", "key-***"),
        ("a sketch-of-it, monkey-business, a key-value pair", "a sketch-of-it, monkey-business, a key-value pair"),
    ],
)
def test_key_shapes_in_error_messages(text, expected):
    assert secrets.mask_error(text) == expected


def test_error_messages_mask_registered_keys_of_any_shape(key):
    assert secrets.mask_error(f"HTTP 401: bad key {quote_plus(KEY)}") == "HTTP 401: bad key ***"


def test_log_records_are_masked_as_they_are_made(key):
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(self.format(record))

    handler = Keep()
    handler.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger("tests.secrets.child")
    log.addHandler(handler)  # a handler added after the secret was registered
    log.propagate = False
    try:
        log.error("call failed: %(error)s", {"error": f"key={quote(KEY, safe='')}"})
        log.warning("plain %s and %d", KEY, 3)
        try:
            raise RuntimeError(f"server said {KEY}")
        except RuntimeError:
            log.exception("boom")
        log.warning("stack", stack_info=True)
        log.error("nothing secret: %(n)d%%", {"n": 5})
    finally:
        log.removeHandler(handler)
        log.propagate = True
    assert records[0] == "call failed: key=***"
    assert records[1] == "plain *** and 3"
    assert "RuntimeError: server said ***" in records[2]
    assert records[4] == "nothing secret: 5%"
    assert not any(KEY in r for r in records)


def test_a_broken_log_call_is_left_to_logging(key, capsys):
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "%(missing)s", ({"other": 1},), None)
    secrets.mask_record(record)  # does not raise
    assert record.msg == "%(missing)s"


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("postgresql://user:PASSWORD1@[::1:15432/docs", "postgresql://***@[::1:15432/docs"),
        ('in URI: "postgresql://user:PASSWORD1@[::1:15432/docs"', 'in URI: "postgresql://***@[::1:15432/docs"'),
        ("postgresql://user:PA@SS@WORD@db:5432/docs", "postgresql://***@db:5432/docs"),
        ("redis://:Redis@PW@127.0.0.1:6379/0", "redis://***@127.0.0.1:6379/0"),
        ("rediss://default:p:w@d@h/1 and redis://h/2", "rediss://***@h/1 and redis://h/2"),
        ("postgres://u:p%40ss@h/db", "postgres://***@h/db"),
        ("<postgresql://u:secret@h/db>", "<postgresql://***@h/db>"),
        ("'redis://:a'b@h'", "'redis://:a'b@h'"),  # a quote ends the URL: the registered password covers it
        ("host=db password=s3cret dbname=docs", "host=db password=*** dbname=docs"),
        ("host=db PASSWORD = 'a b\\'c' dbname=docs", "host=db PASSWORD = *** dbname=docs"),
        ("password='never closed", "password=***"),
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("postgresql://crawler@db/docs", "postgresql://***@db/docs"),
        ("Crawled (200) <GET https://example.com/a>", "Crawled (200) <GET https://example.com/a>"),
    ],
)
def test_connection_strings_are_masked_whatever_their_shape(text, masked):
    assert secrets.mask_credentials(text) == masked


@pytest.mark.parametrize(
    ("dsn", "password"),
    [
        ("postgresql://user:PASSWORD1@[::1:15432/docs", "PASSWORD1"),
        ("postgresql://user:PA@SS@WORD@db:5432/docs", "PA@SS@WORD"),
        ("redis://:Redis@PW@127.0.0.1:6379/0", "Redis@PW"),
        ("  postgresql://u:p:w@h/db", "p:w"),
        ("host=db password='it\\'s long' user=u", "it's long"),
        ("host=db password=plain1234 user=u", "plain1234"),
        ("postgresql://user@h/db", None),
        ("redis://127.0.0.1:6379/0", None),
        ("", None),
    ],
)
def test_the_password_of_a_connection_string_is_found_without_a_parser(dsn, password):
    assert secrets.connection_password(dsn) == password


def test_a_registered_connection_password_is_masked_in_any_text():
    secrets.register_connection("postgresql://user:Pass%40Word1@[::1:15432/docs", "EXTRACTED_DOCS_DSN")
    assert secrets.mask("said Pass@Word1 and Pass%40Word1") == "said *** and ***"

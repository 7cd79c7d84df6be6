"""How the stores write values: JSON (never pickle), bodies zlib-packed with a JSON
head (the same bytes in SQLite's ``kv`` table and PostgreSQL's ``page_data``), and
the embedded store's JSON files written whole (a temporary name, then a rename)."""

from __future__ import annotations

import contextlib
import json
import os
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.cache.perms import open_private
from crawler.cache.responses import RenderedPage, StoredResponse

if TYPE_CHECKING:
    from collections.abc import Callable


#: what ``json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)``
#: builds on every call (the same output: json.dumps makes this encoder and encodes)
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)


def json_encode(value: Any) -> str:
    return _COMPACT.encode(value)


def kv_decode(raw: Any) -> Any:
    """A value of SQLite's ``kv`` table decoded: a BLOB as bytes, text as JSON (a
    ``ValueError``: the entry is unreadable)."""
    return bytes(raw) if isinstance(raw, bytes | memoryview) else json.loads(raw)


def pack_body(head: dict[str, Any], body: bytes, level: int) -> bytes:
    """A stored body and its metadata in one value: JSON head, NUL, body, zlib-compressed."""
    return zlib.compress(json_encode(head).encode("utf-8") + b"\0" + body, level)


def unpack_body(raw: bytes) -> tuple[dict[str, Any], bytes]:
    head, _, body = zlib.decompress(raw).partition(b"\0")
    return json.loads(head), body


def response_encode(response: StoredResponse) -> bytes:
    # level 1: written for every fetched page; 28 instead of 42 µs for 4% more bytes
    head = {
        "url": response.url,
        "status": response.status,
        "headers": response.headers,
        "fetched_at": response.fetched_at,
        "checked_at": response.checked_at,
    }
    return pack_body(head, response.body, 1)


def response_decode(raw: bytes) -> StoredResponse:
    meta, body = unpack_body(raw)
    return StoredResponse(body=body, **meta)


def rendered_encode(page: RenderedPage) -> bytes:
    head: dict[str, Any] = {
        "url": page.url,
        "headers": page.headers,
        "raw_sha256": page.raw_sha256,
        "rendered_at": page.rendered_at,
        "encoding": page.encoding,
    }
    if page.scripts_failed:  # a rendering stored before this field decodes as ""
        head["scripts_failed"] = page.scripts_failed
    if page.failed_runs:  # (as 0)
        head["failed_runs"] = page.failed_runs
    return pack_body(head, page.body, 6)


def rendered_decode(raw: bytes) -> RenderedPage:
    meta, body = unpack_body(raw)
    return RenderedPage(body=body, **meta)


def json_file_text(data: Any) -> str:
    """``data`` as the embedded store's JSON files hold it (indented, keys sorted):
    ``json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True)`` and a line feed.

    Written here because Python's indented JSON encoder runs in Python, not C; values of
    JSON's own types (not subclasses) are written in one pass with the same text, anything
    else is left to ``json.dumps``.

    >>> print(json_file_text({"b": [1, 2.5, None], "a": {"x": "é"}, "c": [], "d": {}}), end="")
    {
      "a": {
        "x": "é"
      },
      "b": [
        1,
        2.5,
        null
      ],
      "c": [],
      "d": {}
    }
    """
    out: list[str] = []
    try:
        _indented(data, 0, out.append)
    except _NotPlain:
        return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    out.append("\n")
    return "".join(out)


class _NotPlain(Exception):
    """A value :func:`_indented` leaves to ``json.dumps``."""


#: nesting past which :func:`_indented` leaves the value to ``json.dumps`` (a cycle
#: ends there too, and ``json.dumps`` says what it says of it)
_MAX_DEPTH = 100
_ENCODE_STR = json.encoder.encode_basestring  # the C function when built (ensure_ascii=False)
_INFINITE = (float("-inf"), float("inf"))


def _indented(value: Any, level: int, out: Callable[[str], None]) -> None:
    """``value`` as ``json.dumps(indent=2, sort_keys=True, ensure_ascii=False)`` writes
    it at nesting ``level`` (the text of json.encoder's ``_make_iterencode``), piece by
    piece to ``out``; :class:`_NotPlain` for what it leaves to ``json.dumps``."""
    kind = type(value)
    if kind is dict:
        if not value:
            out("{}")
            return
        keys = list(value)
        if level >= _MAX_DEPTH or any(type(key) is not str for key in keys):
            raise _NotPlain
        keys.sort()
        inner = "\n" + "  " * (level + 1)
        before = "{" + inner
        for key in keys:
            item = value[key]
            if type(item) is str:  # (the most common value: written at once)
                out(before + _ENCODE_STR(key) + ": " + _ENCODE_STR(item))
            else:
                out(before + _ENCODE_STR(key) + ": ")
                _indented(item, level + 1, out)
            before = "," + inner
        out("\n" + "  " * level + "}")
    elif kind is list or kind is tuple:
        if not value:
            out("[]")
            return
        if level >= _MAX_DEPTH:
            raise _NotPlain
        inner = "\n" + "  " * (level + 1)
        before = "[" + inner
        for item in value:
            if type(item) is str:
                out(before + _ENCODE_STR(item))
            else:
                out(before)
                _indented(item, level + 1, out)
            before = "," + inner
        out("\n" + "  " * level + "]")
    else:
        out(_scalar(value))


def _scalar(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return _ENCODE_STR(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float and value == value and value not in _INFINITE:
        return float.__repr__(value)
    raise _NotPlain


def atomic_write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` so that ``path`` is always whole."""
    atomic_write_text(path, json_file_text(data))


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8) so that ``path`` is always whole."""
    data = text.encode("utf-8")  # (before the file is made: text that cannot be encoded leaves none)
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    fd = open_private(tmp, os.O_WRONLY | os.O_TRUNC)  # 0600: extractions may hold private data
    try:
        # the bytes written with os.write, not through a text file object: that one
        # costs four system calls more a file (fstat, ioctl, lseek twice) and 15 µs
        try:
            written = os.write(fd, data)
            while written < len(data):  # (a short write: the rest)
                written += os.write(fd, memoryview(data)[written:])
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_symlink(target: str, path: Path) -> None:
    """``path`` made a symbolic link to ``target`` (relative to its folder), replacing
    what was there at once: a reader finds the old file or the new link, never none."""
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    os.symlink(target, tmp)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def read_json(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def read_json_dict(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``; ``None`` when it is missing, unreadable or not an object."""
    try:
        data = read_json(path)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None

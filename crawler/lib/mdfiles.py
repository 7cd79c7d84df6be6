"""A page as a markdown file: where it goes in an export directory, what it holds, and
the export's index. Pure functions of plain values (the writer: :mod:`crawler.mdfolder`).

**Where.** :func:`page_path` maps a page's canonical URL to ``<host>/<path>.md``, one
file per URL and never two URLs to one file:

- the host, lower case, with ``+PORT`` unless the port is 443 (``127.0.0.1+8000``,
  ``example.com+80`` for plain http: an http and an https page of one host stay apart,
  since a port speaks one of them);
- a path whose last segment ends in ``.html`` is a file named for it, ``.md`` for
  ``.html`` (``/a/b.html`` -> ``a/b.md``); any other page is its folder's ``index.md``
  (``/`` -> ``index.md``, ``/a/`` and ``/a`` -> ``a/index.md``: the cache holds them as one
  page; ``/a/index.html``, ``/a/b.php`` -> ``a/index.html/index.md``, ``a/b.php/index.md``);
- a query adds ``~`` and 10 hex digits of its hash (``/a/b.html?v=2`` -> ``a/b~3f…1c.md``);
- in each segment, what a file system or a shell may refuse is percent-encoded: ``/``,
  ``\\``, ``:``, ``*``, ``?``, ``"``, ``<``, ``>``, ``|``, ``%``, ``~``, ``#``, spaces,
  control characters; ``.`` and ``..`` are written ``%2E``, an empty one (``//``) ``%``,
  a folder is never named
  ``….md`` (its last dot ``%2E``), a segment past 200 bytes is cut and ends with ``~`` and
  16 hex digits of its hash. Letters of any script stay as they are.

So a path is relative, has no ``..`` and no character to escape, and since ``%`` and
``~`` are always encoded, what the mapping adds can never be read as a page's own name.

**What.** :func:`page_file`: a front matter (``url``, ``title``, ``content_hash``,
``last_changed``, each value a JSON string or null: valid YAML), then the page's
markdown as ``scrapy cache show --content`` prints it (with its final line feed).

**The index.** :func:`index_text`: every page of the export by host, a line each,
``- [title](path) <url>``, in the order of their paths; :func:`index_entries` reads it
back (the keeper of the export updates it for a run's changes without reading the cache).
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from itertools import groupby
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit

if TYPE_CHECKING:
    from collections.abc import Mapping

#: the index file, at the top of the export directory (beside the host folders)
INDEX_NAME = "index.md"
#: the index's first line: an index.md that does not start so is not the export's
INDEX_HEADER = "# Pages exported from the cache"
#: the front matter's fields, in order
FRONT_MATTER_FIELDS = ("url", "title", "content_hash", "last_changed")
#: a segment longer than this (UTF-8 bytes) is cut, its hash appended (NAME_MAX is 255)
MAX_SEGMENT_BYTES = 200
#: hex digits of a query's hash, of a cut segment's hash
QUERY_HASH_DIGITS = 10
CUT_HASH_DIGITS = 16

#: characters a path segment keeps as they are (and letters of any script)
_SEGMENT_SAFE = frozenset(string.ascii_letters + string.digits + "-._!$&'()+,;=@")
#: characters a host keeps (``+`` marks the port)
_HOST_SAFE = frozenset(string.ascii_lowercase + string.digits + "-._")
#: what a link to a file keeps unquoted in the index
_LINK_SAFE = "/+!$&',;=@"
_INDEX_LINE_RE = re.compile(r"^- \[((?:\\.|[^\\\]])*)\]\(([^)\s]+)\) <([^>\s]+)>$")
_LINK_TEXT_ESCAPE_RE = re.compile(r"([\\\[\]])")
_LINK_TEXT_UNESCAPE_RE = re.compile(r"\\(.)")


def _hash(text: str, digits: int) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:digits]


def _encode(text: str, safe: frozenset[str]) -> str:
    """``text`` with every character outside ``safe`` (and not a printable non-ASCII
    character) percent-encoded as its UTF-8 bytes.

    >>> _encode("a b:c~%é\\u2028", _SEGMENT_SAFE)
    'a%20b%3Ac%7E%25é%E2%80%A8'
    """
    return "".join(
        ch
        if ch in safe or (ord(ch) > 127 and ch.isprintable())
        else "".join(f"%{byte:02X}" for byte in ch.encode("utf-8", "surrogateescape"))
        for ch in text
    )


def _name(text: str, safe: frozenset[str], *, folder: bool = False) -> str:
    """One file or folder name: ``text`` encoded, never ``.`` or ``..``, a folder's never
    ending in ``.md``, cut (with its hash) past :data:`MAX_SEGMENT_BYTES`."""
    name = _encode(text, safe)
    if not name:
        name = "%"  # (an empty segment, ``//``: ``%`` alone encodes nothing else)
    elif name.strip(".") == "":
        name = "%2E" * len(name)
    if folder and name.lower().endswith(".md"):
        name = name[:-3] + "%2E" + name[-2:]
    if len(name.encode("utf-8")) > MAX_SEGMENT_BYTES:
        cut = name.encode("utf-8")[: MAX_SEGMENT_BYTES - CUT_HASH_DIGITS - 1].decode("utf-8", "ignore")
        name = f"{cut}~{_hash(name, CUT_HASH_DIGITS)}"
    return name


def host_folder(url: str) -> str:
    """The folder of ``url``'s host: its name, ``+PORT`` unless the port is 443.

    >>> host_folder("https://docs.example.com/a"), host_folder("http://127.0.0.1:8000/")
    ('docs.example.com', '127.0.0.1+8000')
    >>> host_folder("http://example.com/"), host_folder("http://[::1]:8080/")
    ('example.com+80', '%5B%3A%3A1%5D+8080')
    """
    parts = urlsplit(url)
    if not parts.hostname:
        raise ValueError(f"a URL without a host has no file: {url!r}")
    host = parts.hostname.lower()
    name = _name(f"[{host}]" if ":" in host else host, _HOST_SAFE, folder=True)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower(), 0)
    return name if port == 443 else f"{name}+{port}"


def page_path(url: str) -> str:
    """The file of the page whose canonical URL is ``url``, relative to the export
    directory (``/``-separated).

    >>> page_path("https://docs.example.com/")
    'docs.example.com/index.md'
    >>> page_path("https://docs.example.com/guide"), page_path("https://docs.example.com/guide/install.html")
    ('docs.example.com/guide/index.md', 'docs.example.com/guide/install.md')
    >>> page_path("http://127.0.0.1:8000/a/index.html"), page_path("http://127.0.0.1:8000/a/b.md")
    ('127.0.0.1+8000/a/index.html/index.md', '127.0.0.1+8000/a/b%2Emd/index.md')
    >>> page_path("https://e.com/a/../%2e%2e/x%2Fy.html?b=1")
    'e.com/a/%2E%2E/%2E%2E/x%2Fy~cbe78bac86.md'
    """
    parts = urlsplit(url)
    segments = [unquote(s, errors="surrogateescape") for s in parts.path.split("/")[1:]]
    last = segments.pop() if segments else ""
    folders = [host_folder(url), *(_name(s, _SEGMENT_SAFE, folder=True) for s in segments)]
    stem = "index"
    if last.endswith(".html") and last != "index.html":
        stem = _name(last[: -len(".html")], _SEGMENT_SAFE)
    elif last:
        folders.append(_name(last, _SEGMENT_SAFE, folder=True))
    if parts.query:
        stem = f"{stem}~{_hash(parts.query, QUERY_HASH_DIGITS)}"
    return "/".join([*folders, f"{stem}.md"])


def _yaml_string(value: Any) -> str:
    r"""``value`` as a front matter value: a JSON string (or null), whose every character
    that is not printable escaped, so that YAML reads it back as it is.

    >>> print(_yaml_string('Say "hi"\u2028é'), _yaml_string(None))
    "Say \"hi\"\u2028é" null
    """
    if value is None:
        return "null"
    text = json.dumps(str(value), ensure_ascii=False)
    return "".join(ch if ch.isprintable() else json.dumps(ch)[1:-1] for ch in text)


def page_file(page: Mapping[str, Any], text: str) -> str:
    """The file of a page: its front matter (:data:`FRONT_MATTER_FIELDS` of ``page``),
    then ``text`` and a line feed, as ``scrapy cache show --content`` prints it.

    >>> print(page_file({"url": "https://e.com/", "title": "Home", "content_hash": "ab"}, "# Home"), end="")
    ---
    url: "https://e.com/"
    title: "Home"
    content_hash: "ab"
    last_changed: null
    ---
    # Home
    """
    matter = "".join(f"{name}: {_yaml_string(page.get(name))}\n" for name in FRONT_MATTER_FIELDS)
    return f"---\n{matter}---\n{text}\n"


def front_matter_url(text: str) -> str | None:
    """The ``url`` of a page file's front matter (None: not a page file).

    >>> front_matter_url(page_file({"url": "https://e.com/a b"}, "text"))
    'https://e.com/a b'
    >>> front_matter_url("# just markdown") is None, front_matter_url("---\\nurl: https://e.com/\\n---\\n")
    (True, 'https://e.com/')
    """
    lines = text.split("\n")
    if lines[0].rstrip("\r") != "---":
        return None
    for line in lines[1:]:
        line = line.rstrip("\r")
        if line == "---":
            return None
        name, _, value = line.partition(":")
        if name.strip() != "url":
            continue
        value = value.strip()
        if value.startswith('"'):
            try:
                decoded = json.loads(value)
            except ValueError:
                return None
            return decoded if isinstance(decoded, str) and decoded else None
        return value.strip("'") or None
    return None


def is_page_file(head: str) -> bool:
    """Whether a file that starts with ``head`` was written by :func:`page_file` (the
    only files an export deletes).

    >>> is_page_file(page_file({"url": "https://e.com/"}, "")), is_page_file("---\\ntitle: Notes\\n")
    (True, False)
    """
    return head.startswith('---\nurl: "')


def index_text(entries: Mapping[str, tuple[str, str]]) -> str:
    """The index of the pages ``entries`` (path -> (title, url)): a section per host
    folder, a line per page in the order of their paths, linking to its file.

    >>> print(index_text({"e.com/a.md": ("A [draft]", "https://e.com/a.html"), "e.com/index.md": ("", "https://e.com/")}))
    # Pages exported from the cache
    <BLANKLINE>
    2 pages. Each file's front matter names its page: `scrapy cache show FILE` shows it.
    <BLANKLINE>
    ## e.com
    <BLANKLINE>
    - [A \\[draft\\]](e.com/a.md) <https://e.com/a.html>
    - [https://e.com/](e.com/index.md) <https://e.com/>
    <BLANKLINE>
    """
    count = f"{len(entries)} page{'' if len(entries) == 1 else 's'}"
    lines = [INDEX_HEADER, "", f"{count}. Each file's front matter names its page: `scrapy cache show FILE` shows it."]
    for host, paths in groupby(sorted(entries), key=lambda path: path.split("/", 1)[0]):
        lines += ["", f"## {host}", ""]
        for path in paths:
            title, url = entries[path]
            shown = _LINK_TEXT_ESCAPE_RE.sub(r"\\\1", " ".join(title.split()) or url)
            lines.append(f"- [{shown}]({quote(path, safe=_LINK_SAFE)}) <{url}>")
    return "\n".join(lines) + "\n"


def index_entries(text: str) -> dict[str, tuple[str, str]]:
    """What :func:`index_text` wrote: path -> (title as shown, url).

    >>> entries = {"e.com/a b.md": ("A [draft]", "https://e.com/a%20b.html")}
    >>> index_entries(index_text(entries)) == entries
    True
    """
    entries = {}
    for line in text.splitlines():
        found = _INDEX_LINE_RE.match(line)
        if found is not None:
            title = _LINK_TEXT_UNESCAPE_RE.sub(r"\1", found.group(1))
            entries[unquote(found.group(2))] = (title, found.group(3))
    return entries

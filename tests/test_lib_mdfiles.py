"""A page as a markdown file (crawler.lib.mdfiles): one file per URL and never two URLs
to one file, every path safe inside the export directory; the front matter read back
as YAML reads it; the index read back as written."""

from __future__ import annotations

import json
import re
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crawler.lib.mdfiles import (
    FRONT_MATTER_FIELDS,
    MAX_SEGMENT_BYTES,
    front_matter_url,
    host_folder,
    index_entries,
    index_text,
    is_page_file,
    page_file,
    page_path,
)
from crawler.lib.urls import canonical_url


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("https://docs.example.com/", "docs.example.com/index.md"),
        ("https://docs.example.com/a/", "docs.example.com/a/index.md"),
        ("https://docs.example.com/a", "docs.example.com/a/index.md"),  # the cache's one page with /a/
        ("https://docs.example.com/a/b.html", "docs.example.com/a/b.md"),
        ("https://docs.example.com/a/b", "docs.example.com/a/b/index.md"),  # not /a/b.html's file
        ("https://docs.example.com/a/index.html", "docs.example.com/a/index.html/index.md"),  # not /a's
        ("https://docs.example.com/a/b.php", "docs.example.com/a/b.php/index.md"),
        ("https://docs.example.com/a/b.md", "docs.example.com/a/b%2Emd/index.md"),  # a folder is never *.md
        ("http://127.0.0.1:8000/guide/install.html", "127.0.0.1+8000/guide/install.md"),
        ("http://docs.example.com/a.html", "docs.example.com+80/a.md"),  # not the https page's
        ("https://docs.example.com:8443/a.html", "docs.example.com+8443/a.md"),
        ("https://e.com/caf%C3%A9/%E6%96%87.html", "e.com/café/文.md"),  # letters stay letters
        ("https://e.com/a%20b/c:d*e%3F.html", "e.com/a%20b/c%3Ad%2Ae%3F.md"),
        ("https://e.com/~user/x%25y.html", "e.com/%7Euser/x%25y.md"),
        ("https://e.com/a/%2E%2E/b/%2e/c.html", "e.com/b/c.md"),  # (canonical URLs have no dot segments)
        ("https://e.com/a%2Fb.html", "e.com/a%2Fb.md"),
    ],
)
def test_page_path(url, path):
    assert page_path(canonical_url(url)) == path


def test_dot_segments_are_names_never_steps():
    assert page_path("https://e.com/a/../b/./c.html") == "e.com/a/%2E%2E/b/%2E/c.md"
    assert page_path("https://e.com/../..") == "e.com/%2E%2E/%2E%2E/index.md"


def test_a_query_is_a_short_hash_beside_the_plain_path():
    plain = page_path("https://e.com/a/b.html")
    one, two = page_path("https://e.com/a/b.html?v=1"), page_path("https://e.com/a/b.html?v=2")
    assert len({plain, one, two}) == 3
    assert re.fullmatch(r"e\.com/a/b~[0-9a-f]{10}\.md", one)
    assert re.fullmatch(r"e\.com/index~[0-9a-f]{10}\.md", page_path("https://e.com/?page=2"))


def test_a_long_segment_is_cut_with_its_hash_and_stays_apart():
    long_a, long_b = "x" * 300 + "a", "x" * 300 + "b"
    a, b = page_path(f"https://e.com/{long_a}.html"), page_path(f"https://e.com/{long_b}.html")
    assert a != b
    for path in (a, b, page_path(f"https://e.com/{'é' * 300}/x.html")):
        assert all(len(part.encode()) <= 255 for part in path.split("/"))
        assert max(len(part.encode()) for part in path.split("/")) <= MAX_SEGMENT_BYTES + len(".md")


def test_a_url_without_a_host_has_no_file():
    with pytest.raises(ValueError, match="without a host"):
        host_folder("file:///etc/passwd")


#: path segments as crawls meet them, and as an attacker writes them
SEGMENTS = st.one_of(
    st.sampled_from(["", ".", "..", "index", "index.html", "a", "a.html", "a.md", "a.htm", "A", "~", "%", "%2F"]),
    st.text(alphabet=string.ascii_letters + string.digits + "-._~!$&'()*+,;=:@%/?#[] \\\"<>|", max_size=12),
    st.text(max_size=6),
)
#: the origins: a port speaks one scheme (the folder names the host and port, not the scheme)
URLS = st.builds(
    lambda origin, host, segments, query: (
        origin.format(host=host) + "/".join(segments) + (f"?{query}" if query else "")
    ),
    st.sampled_from(["http://{host}/", "http://{host}:8000/", "https://{host}/", "https://{host}:8443/"]),
    st.sampled_from(["e.com", "docs.e.com", "127.0.0.1", "[::1]", "xn--caf-dma.com"]),
    st.lists(SEGMENTS, max_size=4),
    st.sampled_from(["", "a=1", "a=2", "b=1&a=1"]),
)


def safe(path: str) -> bool:
    parts = path.split("/")
    return (
        not path.startswith("/")
        and all(part not in ("", ".", "..") for part in parts)
        and not any(ch in path for ch in '\\:*?"<>|#\0')
        and not any(ord(ch) < 32 for ch in path)
        and parts[-1].endswith(".md")
        and not any(part.lower().endswith(".md") for part in parts[:-1])
    )


@given(st.lists(URLS, min_size=2, max_size=8))
def test_distinct_pages_have_distinct_safe_files(urls):
    pages = {canonical_url(url) for url in urls}
    paths = {page: page_path(page) for page in pages}
    assert len(set(paths.values())) == len(pages), paths
    assert all(safe(path) for path in paths.values()), paths
    # a page's file is never a folder another page's file needs
    folders = {path.rsplit("/", n)[0] for path in paths.values() for n in range(1, path.count("/") + 1)}
    assert not folders & set(paths.values())


@given(st.text(), st.one_of(st.none(), st.text()))
def test_the_front_matter_is_json_strings_one_a_line_and_the_body_is_the_text(title, last_changed):
    page = {"url": "https://e.com/a.html", "title": title, "content_hash": "ab12", "last_changed": last_changed}
    text = "# Title\n\nBody with ---\n---\nand a last line"
    file = page_file(page, text)
    head, body = file.split("\n---\n", 1)
    assert body == text + "\n"  # what `scrapy cache show --content` prints
    lines = head.split("\n")
    assert lines[0] == "---" and [line.split(":", 1)[0] for line in lines[1:]] == list(FRONT_MATTER_FIELDS)
    for line, name in zip(lines[1:], FRONT_MATTER_FIELDS, strict=True):
        value = line.split(": ", 1)[1]
        assert json.loads(value) == page[name]
        assert value.isprintable()  # no character YAML would read as a line break
    assert front_matter_url(file) == page["url"] and is_page_file(file)


def test_a_file_without_a_front_matter_url_names_no_page():
    assert front_matter_url("---\ntitle: x\n---\nurl: https://e.com/\n") is None
    assert front_matter_url("url: https://e.com/\n") is None
    assert front_matter_url('---\nurl: "not json\n---\n') is None


@given(
    st.dictionaries(
        st.builds(page_path, URLS.map(canonical_url)),
        st.tuples(st.text(), URLS.map(canonical_url)),
        max_size=6,
    )
)
def test_the_index_reads_back_what_it_shows(entries):
    text = index_text(entries)
    read = index_entries(text)
    assert set(read) == set(entries)
    assert index_text(read) == text  # what the keeper writes back is what a whole export writes

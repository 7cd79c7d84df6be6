"""``scrapy cache diff``: a page's last change, and a run's changes, as unified diffs of
the text the extractor read; a run found by its id or as ``last``."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from crawler.pipelines.content_hash import text_fields_input

if TYPE_CHECKING:
    from collections.abc import Mapping


def run_diff(change: Mapping[str, Any], content: Mapping[str, Any]) -> dict[str, Any]:
    """One page of ``diff --run``: the change, and the unified diff of its text before
    and after the run when the cache still holds both (else ``diff`` None and a
    ``message`` saying why).

    >>> run_diff({"url": "u", "status": "changed", "content_hash": "h2"},
    ...   {"text": "b\\n", "content_hash": "h2", "stored_at": "t2",
    ...    "previous": {"text": "a\\n", "stored_at": "t1"}})["diff"]
    '--- u (t1)\\n+++ u (t2)\\n@@ -1 +1 @@\\n-a\\n+b\\n'
    """
    entry: dict[str, Any] = {"url": change.get("url"), "status": change.get("status"), "diff": None, "message": ""}
    status, previous = change.get("status"), content.get("previous")
    if status == "new":
        entry["message"] = "new page, no earlier version"
    elif status == "removed":
        entry["message"] = "removed (gone, or no longer reached)"
    elif content.get("content_hash") != change.get("content_hash"):
        entry["message"] = "changed again since this run: `scrapy cache diff URL` shows its last change"
    elif not previous:
        entry["message"] = "the version before this run is not stored"
    else:
        entry["diff"] = version_diff(change.get("url"), previous, content)
    return entry


def version_diff(url: Any, previous: Mapping[str, Any], content: Mapping[str, Any]) -> str:
    """The unified diff of a page's version before (``previous``) and its last
    (``content``): their markdown, headed by their other hashed fields (the title) when
    those changed, which a change of the title alone is. Every line ends in a newline,
    so a last line without one is not run into the next (``-old line.+new line.``).

    >>> print(version_diff("u", {"text": "a\\nold.", "stored_at": "t1"},
    ...                    {"text": "a\\nnew.", "stored_at": "t2"}), end="")
    --- u (t1)
    +++ u (t2)
    @@ -1,2 +1,2 @@
     a
    -old.
    +new.
    >>> version_diff("u", {"text": "a", "fields": {"title": "A"}, "stored_at": "t1"},
    ...              {"text": "a", "fields": {"title": "B"}, "stored_at": "t2"}).splitlines()[2:]
    ['@@ -1,3 +1,3 @@', '-title: A', '+title: B', ' ', ' a']

    An item hashed by its text fields (``{url, title, text}``) has them in its markdown
    already: the change is shown once.

    >>> old = {"text": "# A\\n\\nold.", "fields": {"title": "A", "text": "old."}, "stored_at": "t1"}
    >>> version_diff("u", old, {"text": "# A\\n\\nnew.", "fields": {"title": "A", "text": "new."}}).splitlines()[2:]
    ['@@ -1,3 +1,3 @@', ' # A', ' ', '-old.', '+new.']

    A field that is not in the markdown is shown even when its value is a word of it:

    >>> version_diff("u", {"text": "Install. Then Usage.", "fields": {"title": "Install"}},
    ...              {"text": "Install. Then Usage.", "fields": {"title": "Usage"}}).splitlines()[2:4]
    ['@@ -1,3 +1,3 @@', '-title: Install']
    """
    before = previous.get("fields")
    changed = isinstance(before, dict) and before != (content.get("fields") or {})

    def shown(version: Mapping[str, Any]) -> bool:
        """Whether the version's markdown is made of its fields (an item hashed by its
        text fields: :func:`text_fields_input`), so its diff shows them."""
        fields = version.get("fields") or {}
        return bool(fields) and version.get("text") == text_fields_input(fields, sorted(fields))

    with_fields = changed and not (shown(previous) and shown(content))

    def lines(version: Mapping[str, Any]) -> list[str]:
        fields = version.get("fields") or {}
        head = "".join(f"{name}: {fields[name]}\n" for name in sorted(fields)) + "\n" if with_fields else ""
        text = head + (version.get("text") or "")
        return [line if line.endswith("\n") else line + "\n" for line in text.splitlines(keepends=True)]

    return "".join(
        difflib.unified_diff(
            lines(previous),
            lines(content),
            fromfile=f"{url} ({previous.get('stored_at')})",
            tofile=f"{url} ({content.get('stored_at')})",
        )
    )

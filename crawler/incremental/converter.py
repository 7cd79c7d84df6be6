"""The converter-upgrade policy (``CONVERTER_UPGRADE``): a better HTML-to-markdown
converter changes the text of pages whose site did not change; upgrading it never
silently re-pays every extraction.

When only the converter changed a page's text: ``keep`` (the default) keeps the stored
text and marks the record ``converter_pending`` (``converter_pending_hash`` is the
held-back text's hash, evidence for a later fetch or spelling); ``apply`` stores the new
text as a change. A page whose site changed always gets the new text. See
docs/architecture.md.

Pure functions over the page record; ContentHashPipeline acts on them and counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crawler.lib.pagetext import LEGACY_CONVERTER

if TYPE_CHECKING:
    from collections.abc import Mapping

    from crawler.cache.records import PageRecord

#: CONVERTER_UPGRADE: keep the stored text of pages whose site did not change, or apply
#: the new converter's text to them (and so extract them again)
CONVERTER_UPGRADES = ("keep", "apply")


def check_upgrade(value: Any) -> str:
    """``CONVERTER_UPGRADE``, checked.

    >>> check_upgrade("keep")
    'keep'
    >>> check_upgrade("always")
    Traceback (most recent call last):
    ...
    ValueError: CONVERTER_UPGRADE must be keep or apply, got 'always'
    """
    if value not in CONVERTER_UPGRADES:
        raise ValueError(f"CONVERTER_UPGRADE must be keep or apply, got {value!r}")
    return str(value)


def effective_upgrade(value: str, *, extractor_force: bool) -> str:
    """What is done this run: ``-a redo=extraction`` extracts every page again, from the
    newest text (``apply``).

    >>> effective_upgrade("keep", extractor_force=True), effective_upgrade("keep", extractor_force=False)
    ('apply', 'keep')
    """
    return "apply" if extractor_force else value


def holds_back(value: Any) -> bool:
    """Whether a new rule's text (a converter's, the boilerplate analysis's) is held
    back for pages extracted before: anything but ``apply``.

    >>> holds_back("keep"), holds_back("apply")
    (True, False)
    """
    return bool(value != "apply")


def stored_converter(record: Mapping[str, Any] | PageRecord) -> str:
    """The converter of a page record's stored text.

    >>> stored_converter({"converter": "markdown/3;links=text"}), stored_converter({})
    ('markdown/3;links=text', 'markdown/1;links=urls')
    """
    return str(record.get("converter", LEGACY_CONVERTER))


def converter_only(
    previous: Mapping[str, Any] | PageRecord | None,
    converter: str,
    *,
    same: bool,
    source_unchanged: bool,
    content_hash: str,
) -> bool:
    """Whether a page's new text (``content_hash``, by ``converter``) differs from its
    stored text (``previous``, its record) only because the converter changed: its
    source is unchanged, or the text is the one held back before.

    >>> record = {"converter": "markdown/2", "content_hash": "old"}
    >>> converter_only(record, "markdown/3", same=False, source_unchanged=True, content_hash="new")
    True
    >>> converter_only(record, "markdown/3", same=False, source_unchanged=False, content_hash="new")  # the site changed
    False
    >>> converter_only({**record, "converter_pending_hash": "new"}, "markdown/3", same=False,
    ...                source_unchanged=False, content_hash="new")
    True
    >>> converter_only(record, "markdown/2", same=False, source_unchanged=True, content_hash="new")
    False
    """
    if previous is None or same or stored_converter(previous) == converter:
        return False
    return source_unchanged or content_hash == previous.get("converter_pending_hash")


def note_converter(record: PageRecord, converter: str, pending_hash: str | None) -> None:
    """The converter of the stored text in the page record, and the one whose text was
    held back (``converter_pending``) with that text's content hash
    (``converter_pending_hash``), or none held back.

    >>> record = {"converter": "markdown/2"}
    >>> note_converter(record, "markdown/3", "h"); record
    {'converter': 'markdown/2', 'converter_pending': 'markdown/3', 'converter_pending_hash': 'h'}
    >>> note_converter(record, "markdown/3", None); record
    {'converter': 'markdown/3'}
    """
    if pending_hash is not None:
        record["converter"] = stored_converter(record)
        record["converter_pending"] = converter
        record["converter_pending_hash"] = pending_hash
    else:
        record["converter"] = converter
        record.pop("converter_pending", None)
        record.pop("converter_pending_hash", None)

"""The extraction stage's plan: one :class:`Job` per extractor call to make, and what
decides whether a page needs one (its input's key, the age at which its extraction
expires, whether its record already points to an extraction of this input)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from crawler.cache.records import parse_time
from crawler.lib.hashing import sha256_hex

if TYPE_CHECKING:
    from crawler.cache.records import PageRecord


@dataclass(slots=True)
class Job:
    """One extractor call to make: the page (its key: its record and input are read
    again when the call is made, a batch at a time) and its input's key. A plan of a
    million calls holds their keys, never their pages (about 220 bytes a call)."""

    url_hash: str
    key: str
    forced: bool = False
    #: another page of this run has the same input: look again before calling (a
    #: mirror extracted a moment ago is reused)
    duplicate: bool = False
    #: estimated prompt tokens of this call (a dry run), and of the boilerplate kept out of it
    tokens: int = 0
    boilerplate_tokens: int = 0


def input_key(name: str, version: str, input_hash: str) -> str:
    """The cache identity of one extraction: extractor name and version, input hash.

    >>> input_key("outline", "1", "ab") == input_key("outline", "2", "ab")
    False
    """
    return sha256_hex(f"{name}\0{version}\0{input_hash}")


def expiry_days(url_hash: str, max_age_days: float) -> float:
    """The age at which this page's extraction expires: ``max_age_days`` spread over
    75% to 125% by the page's hash, so a site extracted in one day does not all expire
    in one later run.

    >>> expiry_days("00000000", 10), expiry_days("ffffffff", 10)
    (7.5, 12.5)
    """
    spread = int(url_hash[:8], 16) / 0xFFFFFFFF
    return max_age_days * (0.75 + 0.5 * spread)


def expired(record: PageRecord, url_hash: str, max_age_days: float) -> bool:
    """The page's extraction is older than its :func:`expiry_days` (0: never expires)."""
    return "extraction" in record and extracted_too_long_ago(record.get("last_extracted"), url_hash, max_age_days)


def extracted_too_long_ago(last_extracted: Any, url_hash: str, max_age_days: float) -> bool:
    """:func:`expired` of a page with an extraction, from its ``last_extracted``."""
    if not max_age_days:
        return False
    extracted = parse_time(last_extracted)
    limit = expiry_days(url_hash, max_age_days) * 86400
    return extracted is not None and (datetime.now(UTC) - extracted).total_seconds() > limit


def cached(record: PageRecord, key: str) -> bool:
    """The record says this input was extracted: trusted, the file is not opened
    (``scrapy cache verify`` checks that each record's extraction file is there and
    says so, and ``--repair`` drops an extraction whose file is lost, so the next
    crawl extracts the page again)."""
    extraction = record.get("extraction")
    return extraction is not None and extraction.get("input_key") == key and not record.get("extraction_error")

"""What identifies a block of a page's markdown across a domain's pages: the blocks of a
page (blank lines apart, a fenced code block whole), a block's loose key (digits, dates,
link targets and URLs folded) and its stored hash. The domain boilerplate analysis
(:mod:`crawler.lib.boilerplate`) counts blocks by these keys. Pure functions over strings.
"""

from __future__ import annotations

import hashlib
import re

BLOCK_SEPARATOR_RE = re.compile(r"\n\s*\n")


BLOCK_SEPARATOR_KEEP_RE = re.compile(r"(\n\s*\n)")


LINK_TARGET_RE = re.compile(r"\]\([^)]*\)")


BARE_URL_RE = re.compile(r"https?://\S+")


DIGITS_RE = re.compile(r"\d+")


MONTH_RE = re.compile(
    r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b"
)


FENCES = ("```", "~~~")


def split_blocks(content: str) -> list[str]:
    """Blocks separated by blank lines, a fenced code block never split (its blank
    lines are part of it). Blocks are returned stripped; empty ones dropped.

    >>> split_blocks("a\\n\\n```\\nx\\n\\ny\\n```\\n\\n b ")
    ['a', '```\\nx\\n\\ny\\n```', 'b']
    """
    # a one-character test is a memchr; most pages have no backtick or tilde at all
    if not ("`" in content and "```" in content) and not ("~" in content and "~~~" in content):
        return [s for block in BLOCK_SEPARATOR_RE.split(content) if (s := block.strip())]
    # split in C at blank lines, then join again what an open fence holds: only a part
    # with a fence in it is read line by line
    parts = BLOCK_SEPARATOR_KEEP_RE.split(content)
    blocks: list[str] = []
    current: list[str] = []
    fence = ""
    for i in range(0, len(parts), 2):
        part = parts[i]
        if current:
            current.append(parts[i - 1])  # the blank lines inside the fence
        if "```" in part or "~~~" in part:
            fence = _fence_after(part, fence)
        if fence:
            current.append(part)
            continue
        if current:
            current.append(part)
            part = "".join(current)
            current = []
        if stripped := part.strip():
            blocks.append(stripped)
    if current:
        blocks.append("".join(current).strip())
    return [b for b in blocks if b]


def _fence_after(part: str, fence: str) -> str:
    """The fence open after the lines of ``part`` ("" for none), ``fence`` open before
    them: a line starting with ``` or ~~~ opens one; a line of only that fence closes it."""
    for line in part.split("\n"):
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence) and stripped.strip("`~") == "":
                fence = ""
        elif stripped.startswith(FENCES):
            fence = stripped[: len(stripped) - len(stripped.lstrip(stripped[0]))]
    return fence


def block_key(block: str, loose: bool = True) -> str:
    """The normalized text two blocks must share to count as the same block.

    >>> block_key("© 2025 Acme  Inc. [Privacy](/p?v=1)") == block_key("© 2026 acme inc. [Privacy](/privacy)")
    True
    >>> block_key("Updated March 3, 2025") == block_key("Updated april 14, 2026")
    True
    >>> block_key("© 2025 Acme", loose=False) == block_key("© 2026 Acme", loose=False)
    False
    """
    if block.isascii() and not (
        "\n" in block or "  " in block or "\t" in block or "\r" in block or "\x0b" in block or "\x0c" in block
    ):
        key = block.strip().lower()  # already single-spaced, as our markdown paragraphs are
    else:
        key = " ".join(block.split()).lower()
    if loose:
        # plain substring tests first (C speed): most prose has no link, URL or digit
        if "](" in key:
            key = LINK_TARGET_RE.sub("]()", key)
        if "http" in key:
            key = BARE_URL_RE.sub("url", key)
        if has_digit(key):  # a date has digits: month names only matter then
            key = MONTH_RE.sub("month", DIGITS_RE.sub("0", key))
    return key


def has_digit(text: str) -> bool:
    return (
        "0" in text or "1" in text or "2" in text or "3" in text or "4" in text
        or "5" in text or "6" in text or "7" in text or "8" in text or "9" in text
    )  # fmt: skip


def key_hash(key: str) -> str:
    """The stored form of a block key (16 hex chars of its SHA-256, as the original
    algorithm's block hash)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def is_heading(block: str) -> bool:
    """A one-line ATX heading (``# Title``).

    >>> is_heading("## Notes"), is_heading("#hashtag"), is_heading("# A\\ntext")
    (True, False, False)
    """
    return block[:1] == "#" and "\n" not in block and block.lstrip("#")[:1] in (" ", "\t", "")


def shorten(text: str, limit: int = 70) -> str:
    """
    >>> shorten("a  b\\nc" + "x" * 80, 10)
    'a b cxxxx…'
    """
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def prose_length(block: str) -> int:
    """The length of a block without its link targets.

    >>> prose_length("[home page](https://example.com/)"), prose_length("plain")
    (11, 5)
    """
    return len(LINK_TARGET_RE.sub("]", block)) if "](" in block else len(block)

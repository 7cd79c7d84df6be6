"""The marks of markdown the writer (:mod:`crawler.lib.markdown`) puts around and
inside text: what escapes a star or a number the page wrote, where the spaces at an
element's ends go, quotes, tables, a list item holding code. Pure functions over
strings.
"""

from __future__ import annotations

import re

CODE_MARK_RE = re.compile("\x00(\\d+)\x00")  # where a list item held a code block


WS_RE = re.compile(r"\s+")


def literal(text: str) -> str:
    r"""``text`` with its stars and backticks escaped: an asterisk the page wrote is no
    emphasis (Haddock's ``O(m*log(n/m + 1))``), a backtick no code span (a page's typo,
    "the``CREATE INDEX``", would take the words after it into code).

    >>> literal("O(m*log(n/m + 1)), m <= n*2")
    'O(m\\*log(n/m + 1)), m <= n\\*2'
    >>> literal("its 'min_update_index` to")
    "its 'min_update_index\\` to"
    """
    if "*" in text:
        text = text.replace("*", "\\*")
    return text.replace("`", "\\`") if "`" in text else text


#: a text starting as an ordered list's item does ("1. Introduction", "2) Run")
LIST_START_RE = re.compile(r"^(\d{1,9})([.)])(?=\s|$)")


def literal_start(text: str) -> str:
    r"""``text`` with a number at its start that markdown would read as a list's (a
    numbered table of contents: "1. Introduction") escaped: the number stays a word.

    >>> literal_start("1. Introduction"), literal_start("2) Run"), literal_start("1.5 times")
    ('1\\. Introduction', '2\\) Run', '1.5 times')
    """
    return LIST_START_RE.sub(r"\1\\\2", text)


def spaced(raw: str, written: str) -> str:
    """``written`` (the markdown of ``raw``) with a space before and after it where ``raw``
    has one at that end: the spaces at an element's ends stay outside its marks.

    >>> spaced(" or ", "*or*"), spaced("str", "*str*")
    (' *or* ', '*str*')
    """
    return (" " if raw[:1].isspace() else "") + written + (" " if raw[-1:].isspace() else "")


def quoted(markdown: str) -> str:
    return "\n".join(("> " + line).rstrip() for line in markdown.splitlines())


def item_with_code(text: str, codes: list[str], indent: str, marker: str) -> list[str]:
    r"""The lines of a list item whose text holds code marks: the item's line, each
    code block (one entry, several lines), and the text after it, indented under the item.

    >>> item_with_code("Run: \x000\x00 then go.", ["```\nx\n```"], "", "1. ")
    ['1. Run:', '```\nx\n```', '   then go.']
    """
    parts = CODE_MARK_RE.split(text)
    lines = [f"{indent}{marker}{parts[0].strip()}".rstrip()]
    for index in range(1, len(parts), 2):
        lines.append(codes[int(parts[index])])
        after = parts[index + 1].strip()
        if after:
            lines.append(f"{indent}{' ' * len(marker)}{after}")
    return lines


def table_markdown(rows: list[list[str]], header: bool) -> str:
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    head, body = (rows[0], rows[1:]) if header else ([""] * width, rows)
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * width]
    lines.extend("| " + " | ".join(r) + " |" for r in body)
    return "\n".join(lines)

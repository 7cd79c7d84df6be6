"""Markdown blocks: the one parser of headings, fenced code and paragraphs that the
outline extractor and the chunker share, so both read a page the same way.

Pure functions, no Scrapy dependency. CommonMark's rules where they matter: up to
three spaces before a heading or a fence; a heading's closing ``#``s only after a
space (``# Using C#`` keeps its ``#``); a fence closes with the same character, at
least as long.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)")
HEADING_RE = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")  # a closing #s after a space


@dataclass(frozen=True)
class Block:
    kind: str  # "heading", "code" or "text"
    text: str
    level: int = 0  # heading level


def split_blocks(markdown: str) -> list[Block]:
    """Headings, fenced code blocks (kept whole, blank lines and all) and blank-line
    separated text blocks, in page order.

    >>> [(b.kind, b.text) for b in split_blocks("# A\\ntext\\n\\n```\\nx\\n\\ny\\n```\\nmore")]
    [('heading', 'A'), ('text', 'text'), ('code', '```\\nx\\n\\ny\\n```'), ('text', 'more')]
    """
    blocks: list[Block] = []
    para: list[str] = []

    def flush() -> None:
        text = "\n".join(para).strip("\n")
        if text.strip():
            blocks.append(Block("text", text))
        para.clear()

    lines = markdown.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE_RE.match(line)
        if fence:
            flush()
            marker = fence.group(1)
            code = [line]
            i += 1
            while i < len(lines):
                code.append(lines[i])
                closing = FENCE_RE.match(lines[i])
                i += 1
                if closing and closing.group(1)[0] == marker[0] and len(closing.group(1)) >= len(marker):
                    break
            blocks.append(Block("code", "\n".join(code)))
            continue
        heading = HEADING_RE.match(line)
        if heading:
            flush()
            title = heading.group(2)
            blocks.append(Block("heading", "" if set(title) == {"#"} else title, len(heading.group(1))))
        elif not line.strip():
            flush()
        else:
            para.append(line)
        i += 1
    flush()
    return blocks


def fence_language(code: str) -> str:
    """The info string's first word of a fenced code block (its language).

    >>> fence_language("```python title=x\\nprint()\\n```"), fence_language("~~~\\nx\\n~~~")
    ('python', '')
    """
    match = FENCE_RE.match(code.split("\n", 1)[0])
    return match.group(2) if match else ""


def code_body(code: str) -> str:
    """A fenced code block's lines without its fences (an unclosed fence keeps every line).

    >>> code_body("```sh\\npip install x\\n```")
    'pip install x'
    """
    lines = code.split("\n")[1:]
    if lines:
        closing = FENCE_RE.match(lines[-1])
        opening = FENCE_RE.match(code)
        if closing and opening and closing.group(1)[0] == opening.group(1)[0] and not lines[-1].strip(" `~"):
            lines = lines[:-1]
    return "\n".join(lines)

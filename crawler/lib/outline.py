"""Markdown to a structured outline: what the default extractor returns.

Pure functions, no Scrapy dependency.
"""

from __future__ import annotations

import re
from typing import Any

from crawler.lib.blocks import code_body, fence_language, split_blocks

LINK_RE = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)")
WORD_RE = re.compile(r"\w+")


def outline_markdown(markdown: str) -> dict[str, Any]:
    """Title, heading outline, sections of text, code blocks and links of ``markdown``
    (its blocks as :func:`crawler.lib.blocks.split_blocks` reads them).

    >>> doc = outline_markdown("# Guide\\n\\nIntro [x](http://a/x).\\n\\n## Using C#\\n\\n"
    ...                        "```sh\\npip install x\\n```")
    >>> doc["title"], [h["title"] for h in doc["outline"]]
    ('Guide', ['Guide', 'Using C#'])
    >>> doc["code_blocks"], doc["links"]
    ([{'language': 'sh', 'code': 'pip install x', 'section': 'Using C#'}], [{'text': 'x', 'url': 'http://a/x'}])
    >>> doc["sections"][0]
    {'heading': 'Guide', 'level': 1, 'text': 'Intro [x](http://a/x).'}
    """
    outline: list[dict[str, Any]] = []
    sections: list[dict[str, Any]] = []
    code_blocks: list[dict[str, str]] = []
    heading, level = "", 0
    texts: list[str] = []

    def close_section() -> None:
        text = "\n\n".join(texts).strip()
        if text or heading:
            sections.append({"heading": heading, "level": level, "text": text})

    for block in split_blocks(markdown):
        if block.kind == "heading":
            close_section()
            heading, level, texts = block.text, block.level, []
            outline.append({"level": level, "title": heading})
        elif block.kind == "code":
            code_blocks.append(
                {"language": fence_language(block.text), "code": code_body(block.text), "section": heading}
            )
        else:
            texts.append(block.text)
    close_section()

    title = next((h["title"] for h in outline if h["level"] == 1), outline[0]["title"] if outline else "")
    seen: set[str] = set()
    links = []
    for text, url in LINK_RE.findall(markdown):
        if url not in seen:
            seen.add(url)
            links.append({"text": text, "url": url})
    return {
        "title": title,
        "outline": outline,
        "sections": sections,
        "code_blocks": code_blocks,
        "links": links,
        "word_count": len(WORD_RE.findall(markdown)),
    }

"""Markdown to a structured outline: what the default extractor returns.

Pure functions, no Scrapy dependency.
"""

from __future__ import annotations

import re
from typing import Any

HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE_RE = re.compile(r"^(`{3,}|~{3,})\s*([\w+#.-]*)\s*$")
LINK_RE = re.compile(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)")
WORD_RE = re.compile(r"\w+")


def outline_markdown(markdown: str) -> dict[str, Any]:
    """Title, heading outline, sections of text, code blocks and links of ``markdown``.

    >>> doc = outline_markdown("# Guide\\n\\nIntro [x](http://a/x).\\n\\n## Install\\n\\n"
    ...                        "```sh\\npip install x\\n```")
    >>> doc["title"], [h["title"] for h in doc["outline"]]
    ('Guide', ['Guide', 'Install'])
    >>> doc["code_blocks"], doc["links"]
    ([{'language': 'sh', 'code': 'pip install x', 'section': 'Install'}], [{'text': 'x', 'url': 'http://a/x'}])
    >>> doc["sections"][0]
    {'heading': 'Guide', 'level': 1, 'text': 'Intro [x](http://a/x).'}
    """
    outline: list[dict[str, Any]] = []
    sections: list[dict[str, Any]] = []
    code_blocks: list[dict[str, str]] = []
    current: dict[str, Any] = {"heading": "", "level": 0, "lines": []}
    fence: str | None = None
    code_lang = ""
    code_lines: list[str] = []

    def close_section() -> None:
        text = "\n".join(current["lines"]).strip()
        if text or current["heading"]:
            sections.append({"heading": current["heading"], "level": current["level"], "text": text})

    for line in markdown.splitlines():
        if fence is not None:
            if line.strip() == fence:
                code_blocks.append(
                    {"language": code_lang, "code": "\n".join(code_lines), "section": current["heading"]}
                )
                fence, code_lines = None, []
            else:
                code_lines.append(line)
            continue
        fence_match = FENCE_RE.match(line.strip())
        if fence_match:
            fence, code_lang = fence_match.group(1), fence_match.group(2)
            continue
        heading = HEADING_RE.match(line)
        if heading:
            close_section()
            level, title = len(heading.group(1)), heading.group(2).strip()
            outline.append({"level": level, "title": title})
            current = {"heading": title, "level": level, "lines": []}
        else:
            current["lines"].append(line)
    if fence is not None and code_lines:  # unterminated fence: keep what it held
        code_blocks.append({"language": code_lang, "code": "\n".join(code_lines), "section": current["heading"]})
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

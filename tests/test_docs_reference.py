"""The README's reference tables say what the code reads and counts: every setting of
the project and every stat a component writes is documented."""

from __future__ import annotations

import re

from scrapy.settings import default_settings

from tests.crawl import ROOT

README = (ROOT / "README.md").read_text()
SOURCES = {path: path.read_text() for path in sorted((ROOT / "crawler").rglob("*.py"))}
#: settings read under names of other projects (Scrapy's own, scrapy-playwright's)
FOREIGN_PREFIXES = ("PLAYWRIGHT_",)


def project_setting(name: str) -> bool:
    return not hasattr(default_settings, name) and not name.startswith(FOREIGN_PREFIXES)


def test_every_setting_the_code_reads_is_documented():
    defined = re.findall(r"^([A-Z][A-Z0-9_]+) =", (ROOT / "crawler" / "settings.py").read_text(), re.MULTILINE)
    read = {
        name
        for text in SOURCES.values()
        for name in re.findall(r"\.get(?:bool|int|float|list|dict)?\(\s*\"([A-Z][A-Z0-9_]+)\"", text)
    }
    names = {name for name in {*defined, *read} if project_setting(name)}
    assert {"CONVERTER_UPGRADE", "MARKDOWN_LINKS", "BOILERPLATE_POSITION"} <= names
    assert sorted(name for name in names if f"`{name}`" not in README) == []


def test_every_stat_the_code_writes_is_documented():
    stats = {
        name
        for text in SOURCES.values()
        for name in re.findall(r"(?:inc_value|set_value|max_value|min_value)\(\s*\"([a-z_]+/[\w/]+)\"", text)
    }
    assert {"converter/pages_pending", "extraction/empty_input", "docs/main_content_fallback"} <= stats
    assert sorted(name for name in stats if f"`{name}`" not in README) == []

"""The reference pages (docs/settings.md, docs/stats.md, docs/meta-keys.md) say what the
code reads and counts, and nothing it does not: every setting of the project with its
default from the add-on's table, every stat with the one module that writes its
namespace, every meta key the code reads."""

from __future__ import annotations

import ast
import fnmatch
import re
from collections import defaultdict

from scrapy.settings import default_settings

from crawler.defaults import REMOVED, SETTINGS
from tests.crawl import ROOT

DOCS = ROOT / "docs"
SOURCES = {path: path.read_text() for path in sorted((ROOT / "crawler").rglob("*.py"))}
#: settings read under names of other projects (scrapy-playwright's)
FOREIGN_PREFIXES = ("PLAYWRIGHT_",)
#: stats namespaces of other projects
FOREIGN_STATS = ("playwright/",)
#: a setting read: settings.get("X"), typed(settings).getint("X"), settings["X"]...
READ_RE = re.compile(r"""(?:\.get(?:bool|int|float|list|dict)?\(|settings\[)\s*"([A-Z][A-Z0-9_]+)\"""")
#: a stat written: stats.inc_value("ns/x"), set_value, and the components' own _inc/inc helpers
STAT_RE = re.compile(r"""\b(?:inc_value|set_value|max_value|min_value|_inc|inc)\(\s*f?"([a-z_]+/[^"]*)\"""")
#: a meta key read or written: meta.get("k"), meta["k"], meta.pop("k"), "k" in request.meta
META_RE = re.compile(
    r"""meta(?:\.get|\.pop|\.setdefault)?(?:\(|\[)\s*"([a-z_0-9]+)"|"([a-z_0-9]+)" in (?:request|response)\.meta"""
)
#: meta keys named by the module constants (META_REVALIDATION = "revalidation")
META_CONSTANT_RE = re.compile(r"""^META_[A-Z_]+ = "([a-z_0-9]+)\"""", re.MULTILINE)


def tables(page: str, header: str) -> list[list[str]]:
    """The rows (cells) of every table in ``page`` whose header line starts with ``header``."""
    rows, inside = [], False
    for line in page.splitlines():
        if line.startswith(header):
            inside = True
        elif inside and line.startswith("| ---"):
            continue
        elif inside and line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
        else:
            inside = False
    return rows


def project_setting(name: str) -> bool:
    return not hasattr(default_settings, name) and not name.startswith(FOREIGN_PREFIXES)


def documented_settings() -> dict[str, str]:
    """Setting -> the default cell, from the ``| Setting | Default |`` tables."""
    rows = tables((DOCS / "settings.md").read_text(), "| Setting | Default |")
    return {row[0].strip("`"): row[1] for row in rows}


def test_every_setting_the_code_reads_is_documented_with_the_tables_default():
    read = {name for text in SOURCES.values() for name in READ_RE.findall(text) if project_setting(name)}
    assert {"REVALIDATION_ENABLED", "EXTRACTOR_MAX_AGE", "REVALIDATION_MAX_STORED_BYTES", "MARKDOWN_LINKS"} <= read
    assert not read & set(REMOVED)
    assert sorted(read - set(SETTINGS)) == []  # every project setting read has its default in the table
    documented = documented_settings()
    assert sorted(set(SETTINGS) - set(documented)) == []
    assert sorted(set(documented) - set(SETTINGS)) == []  # no documented setting the add-on does not know
    for name, cell in documented.items():
        assert cell.startswith("`") and cell.endswith("`"), f"{name}: default {cell!r} is not one literal"
        assert ast.literal_eval(cell.strip("`")) == SETTINGS[name], (
            f"{name}: documented {cell}, default {SETTINGS[name]!r}"
        )
    assert len(SETTINGS) <= 66  # a set a user can hold in their head


def test_every_removed_setting_is_listed_with_what_replaces_it():
    rows = tables((DOCS / "settings.md").read_text(), "| Removed setting | Instead |")
    assert {row[0].strip("`"): row[1] for row in rows} == REMOVED


def written_stats() -> dict[str, set[str]]:
    """Stat pattern (``{...}`` as ``*``) -> the modules that write it."""
    stats: dict[str, set[str]] = defaultdict(set)
    for path, text in SOURCES.items():
        for name in STAT_RE.findall(text):
            stats[re.sub(r"\{[^}]*\}", "*", name)].add(str(path.relative_to(ROOT)))
    return stats


def documented_stats() -> set[str]:
    """Every stat named in the first cell of the ``| Stat | Meaning |`` tables (``<...>`` as ``*``)."""
    rows = tables((DOCS / "stats.md").read_text(), "| Stat | Meaning |")
    return {re.sub(r"<[^>]*>", "*", name) for row in rows for name in re.findall(r"`([^`]+)`", row[0])}


def test_every_stat_written_is_documented_and_every_documented_stat_is_written():
    written = written_stats()
    documented = documented_stats()
    assert {"revalidation/not_modified", "pages/folded", "removal/pages_removed", "converter/pages_pending"} <= set(
        written
    )

    def covered(pattern: str, names: set[str]) -> bool:
        return any(fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(pattern, name) for name in names)

    assert sorted(stat for stat in written if not covered(stat, documented)) == []
    foreign = [stat for stat in documented if stat.startswith(FOREIGN_STATS)]
    assert sorted(stat for stat in documented - set(foreign) if not covered(stat, set(written))) == []


#: modules of one component with another: the docs spider's class is DocsSpider on its
#: bases CrawlRules, SitemapDiscovery and PageFailures (callbacks and errbacks must be the
#: spider's methods)
COMPONENT_OF = {
    "crawler/spiders/discovery.py": "crawler/spiders/docs.py",
    "crawler/spiders/failures.py": "crawler/spiders/docs.py",
    "crawler/spiders/rules.py": "crawler/spiders/docs.py",
}


def test_each_stats_namespace_has_one_writer_module():
    writers: dict[str, set[str]] = defaultdict(set)
    for stat, modules in written_stats().items():
        writers[stat.split("/", 1)[0]] |= {COMPONENT_OF.get(module, module) for module in modules}
    assert {namespace: sorted(modules) for namespace, modules in writers.items() if len(modules) != 1} == {}
    assert writers["docs"] == {"crawler/spiders/docs.py"}
    assert writers["revalidation"] == {"crawler/middlewares/revalidation.py"}
    assert writers["pages"] == {"crawler/incremental/ledger.py"}
    assert writers["removal"] == {"crawler/stages/removal.py"}


def test_every_meta_key_the_code_uses_is_documented():
    keys = set()
    for path, text in SOURCES.items():
        if "cache" in path.relative_to(ROOT).parts:  # records named meta there, no requests
            continue
        keys |= {a or b for a, b in META_RE.findall(text)}
        keys |= set(META_CONSTANT_RE.findall(text))
    assert {"dont_revalidate", "force_extraction", "force_render", "revalidation"} <= keys
    page = (DOCS / "meta-keys.md").read_text()
    assert sorted(key for key in keys if f"`{key}`" not in page) == []


#: meta keys of other projects the code names as they are (Scrapy's, scrapy-playwright's)
FOREIGN_META = {
    "playwright",
    "playwright_page_goto_kwargs",
    "playwright_page_event_handlers",
    "redirect_urls",
    "redirect_times",
    "retry_times",
    "dont_retry",
    "dont_obey_robotstxt",
    "download_maxsize",
}


def test_the_project_s_meta_keys_are_named_in_one_module():
    """crawler/meta.py names every meta key of the project; the other modules import
    its constants (a literal elsewhere is another project's key, or a docstring's
    mention of one of ours)."""
    meta = ROOT / "crawler" / "meta.py"
    ours = set(META_CONSTANT_RE.findall(SOURCES[meta]))
    assert {"revalidation", "dont_revalidate", "docs_depth", "render_check"} <= ours
    for path, text in SOURCES.items():
        if path == meta or "cache" in path.relative_to(ROOT).parts:
            continue
        assert META_CONSTANT_RE.findall(text) == [], f"{path.name} names a meta key of its own"
        literals = {a or b for a, b in META_RE.findall(text)}
        assert sorted(literals - ours - FOREIGN_META) == [], path.name

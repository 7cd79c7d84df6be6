"""The documentation holds together: its links lead somewhere, the README stays short,
and every command option the code defines and every make target is in docs/commands.md
(and `make` alone lists the targets)."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
COMMANDS_DOC = ROOT / "docs" / "commands.md"
MAKEFILE = ROOT / "Makefile"
#: the sources whose ``add_argument("--x", ...)`` options a user types
COMMAND_SOURCES = [
    *sorted((ROOT / "crawler" / "commands").glob("*.py")),
    ROOT / "crawler" / "subcommands.py",
    ROOT / "crawler" / "recrawl.py",
]
README_MAX_LINES = 220

FENCE_RE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN_RE = re.compile(r"(`+).+?\1", re.DOTALL)
LINK_RE = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose(text: str) -> str:
    """``text`` without fenced code blocks and code spans (``[text](url)`` there is an example)."""
    return CODE_SPAN_RE.sub("", FENCE_RE.sub("", text))


def relative_links(text: str) -> list[str]:
    """The link targets of ``text`` that are files of this repository (no scheme, no bare anchor).

    >>> relative_links("[a](docs/x.md#y) [b](https://e.com) [c](#top) `[d](nope.md)` [e](../README.md)")
    ['docs/x.md#y', '../README.md']
    """
    return [t for t in LINK_RE.findall(prose(text)) if not SCHEME_RE.match(t) and not t.startswith("#")]


def command_options(path: Path) -> set[str]:
    """The ``--long`` options of every ``add_argument`` call in ``path``."""
    options = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument":
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.startswith("--"):
                    options.add(arg.value)
    return options


def test_the_pages_exist():
    names = {page.name for page in PAGES}
    assert {"README.md", "commands.md", "cache.md", "architecture.md", "development.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_leads_to_a_file(page):
    broken = []
    for target in relative_links(page.read_text(encoding="utf-8")):
        path = target.split("#", 1)[0]
        if path and not (page.parent / path).exists():
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)} links to missing files: {broken}"


def test_the_readme_stays_short():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines, at most {README_MAX_LINES}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_page_speaks_of_a_seed(page):
    hits = [
        f"{number}: {line.strip()}"
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bseed\b", line, re.IGNORECASE)
    ]
    assert not hits, f"{page.relative_to(ROOT)}: say what the behaviour is, not 'seed': {hits}"


def test_every_command_option_is_documented():
    options = {(path.name, option) for path in COMMAND_SOURCES for option in command_options(path)}
    assert len(options) >= 20  # the parse found the options (not a vacuous pass)
    doc = COMMANDS_DOC.read_text(encoding="utf-8")
    missing = sorted(
        f"{option} ({name})"
        for name, option in options
        if not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", doc)
    )
    assert not missing, f"options missing from docs/commands.md: {missing}"


def make_targets() -> list[str]:
    """The Makefile's ``.PHONY`` targets: the ones a user types."""
    phony = re.search(r"^\.PHONY:(.*)$", MAKEFILE.read_text(encoding="utf-8"), re.MULTILINE)
    assert phony is not None
    return phony.group(1).split()


def test_every_make_target_is_documented():
    doc = COMMANDS_DOC.read_text(encoding="utf-8")
    missing = [t for t in make_targets() if not re.search(rf"`make {re.escape(t)}(?![\w-])", doc)]
    assert not missing, f"make targets missing from docs/commands.md's table: {missing}"


@pytest.mark.e2e
@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_alone_lists_every_target_and_installs_nothing():
    planned = subprocess.run(["make", "-n"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert planned.returncode == 0
    assert all(line.startswith("echo ") for line in planned.stdout.splitlines()), planned.stdout  # no install
    listed = subprocess.run(["make", "-s"], cwd=ROOT, capture_output=True, text=True, timeout=60).stdout
    missing = [
        t for t in make_targets() if t != "help" and not re.search(rf"(?<![\w-]){re.escape(t)}(?![\w-])", listed)
    ]
    assert not missing, f"make targets missing from `make help`: {missing}"

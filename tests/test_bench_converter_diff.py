"""bench.converter_diff: which pages two converters write differently."""

import json
import subprocess
import sys

import pytest

from bench.converter_diff import changed, report
from tests.crawl import ROOT

OLD = {"corpus_dev": {"a.html": "1", "b.html": "2"}, "corpus_test": {"t.html": "1"}, "docs": {"s:x": "1", "s:y": "1"}}
NEW = {"corpus_dev": {"a.html": "1", "b.html": "3"}, "corpus_test": {"t.html": "2"}, "docs": {"s:x": "1", "s:y": "2"}}


def test_changed_pages_per_group_and_site_the_test_part_only_counted():
    assert changed(OLD, NEW) == {"corpus_dev": ["b.html"], "corpus_test": ["t.html"], "docs": ["s:y"]}
    text = report(OLD, NEW)
    assert "corpus_dev: 1 of 2 pages changed\n    b.html" in text
    assert "corpus_test: 1 of 1 pages changed" in text and "t.html" not in text  # never looked into
    assert "docs: 1 of 2 pages changed\n    s: 1" in text


def test_a_page_one_side_lacks_counts_as_changed():
    assert changed({"docs": {"s:x": "1"}}, {"docs": {}}) == {"docs": ["s:x"]}


@pytest.mark.e2e
def test_the_diff_command(tmp_path):
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(OLD))
    new.write_text(json.dumps(NEW))
    proc = subprocess.run(
        [sys.executable, "-m", "bench.converter_diff", "--diff", str(old), str(new)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "corpus_dev: 1 of 2 pages changed"

"""The extraction-quality yardstick: the scoring (bench.quality), the evaluation set's
integrity (bench/evalset) and a smoke run of bench.extract_quality without trafilatura."""

import doctest
import json
import re
import subprocess
import sys

import pytest

from bench import extract_quality, quality
from bench.extract_quality import EVALSET, GROUPS, gold_path, pages
from bench.quality import code_line_recall, score, shingles, tokens
from tests.crawl import ROOT

# -- scoring -------------------------------------------------------------------


def test_quality_doctests():
    # bench/ is not among the doctest paths of pytest: run its doctests here
    failures, attempted = doctest.testmod(quality)
    assert attempted > 5 and failures == 0


def test_tokens_ignore_markdown_syntax_but_count_urls():
    assert tokens("## Go `run()` **now**") == ["go", "run", "now"]
    assert tokens("[docs](https://a.example/x_y)") == ["docs", "https", "a", "example", "x_y"]
    assert tokens("| --- | --- |\n> * ¶ ​") == []


def test_score_exact_values():
    s = score("a b c d e", "a b c d")  # shingles abcd, bcde against abcd
    assert (s.precision, s.recall, s.words_ratio) == (0.5, 1.0, 1.25)
    assert s.f1 == pytest.approx(2 / 3)
    assert (s.output_words, s.gold_words) == (5, 4)


def test_score_markdown_and_case_do_not_matter():
    s = score("# Title\n\n| One | two |\n| --- | --- |\n| *three* | `four` |", "title one two three four")
    assert (s.precision, s.recall, s.f1, s.words_ratio) == (1.0, 1.0, 1.0, 1.0)


def test_score_word_order_matters():
    s = score("four three two one", "one two three four")
    assert (s.precision, s.recall) == (0.0, 0.0)


def test_score_short_texts_fall_back_to_unigrams():
    assert shingles(["a", "b", "c"]) == {("a",), ("b",), ("c",)}
    s = score("hello there", "hello world")
    assert (s.precision, s.recall, s.f1) == (0.5, 0.5, 0.5)
    # one side short is enough: both are compared word by word
    s = score("one two", "one two three four five")
    assert (s.precision, s.recall) == (1.0, 0.4)


def test_score_empty_output():
    s = score("", "some gold text here")
    assert (s.precision, s.recall, s.f1, s.words_ratio, s.output_words) == (0.0, 0.0, 0.0, 0.0, 0)


def test_code_line_recall():
    gold = "Text\n\n```js\nconst a = 1;\n\n  return a;\n```\n\nMore\n\n```\nnpm test\n```"
    assert code_line_recall("```\nconst a = 1;\nreturn a;\nnpm test\n```", gold) == 1.0
    assert code_line_recall("```\nconst a = 1;  return a;\n```\nnpm test", gold) == pytest.approx(1 / 3)
    assert code_line_recall("`const a = 1; return a;`", gold) == 0.0
    assert code_line_recall("x", "no code") is None


# -- the evaluation set --------------------------------------------------------


def test_every_page_has_non_empty_gold_and_the_reverse():
    found = pages()
    assert len([p for g, p in found if g == "docs"]) >= 12
    assert len([p for g, p in found if g == "general"]) >= 8
    assert len([p for g, p in found if g == "holdout"]) >= 10
    for _, page in found:
        gold = gold_path(page)
        assert gold.exists(), f"{page} has no {gold.name}"
        assert len(tokens(gold.read_text(encoding="utf-8"))) >= 50, f"{gold} is (nearly) empty"
    for group in GROUPS:
        for gold in (EVALSET / group).glob("*.gold.md"):
            assert gold.with_name(gold.name.removesuffix(".gold.md") + ".html").exists(), f"{gold} has no page"


def test_gold_files_are_well_formed():
    for _, page in pages():
        gold = gold_path(page).read_text(encoding="utf-8")
        assert gold.startswith("# "), f"{page.name}: the gold starts with the page title"
        fences = [line for line in gold.splitlines() if line.lstrip().startswith("```")]
        assert len(fences) % 2 == 0, f"{page.name}: unbalanced code fences"
        assert "](http" not in gold, f"{page.name}: the gold keeps link text, not link targets"


def test_readme_lists_every_page_and_every_listed_page_exists():
    readme = (EVALSET / "README.md").read_text(encoding="utf-8")
    listed: dict[str, set[str]] = {}
    group = None
    for line in readme.splitlines():
        heading = re.match(r"## (\w+)/$", line)
        if heading:
            group = heading.group(1)
        row = re.match(r"\| `(\w+)` \|", line)
        if row and group:
            listed.setdefault(group, set()).add(row.group(1))
    on_disk = {g: {p.name.removesuffix(".html") for gg, p in pages() if gg == g} for g in GROUPS}
    assert listed == on_disk


# -- the benchmark -------------------------------------------------------------


def test_holdout_group_is_its_own_and_stays_out_of_all():
    results = extract_quality.run(
        repeat=1, with_trafilatura=False, names=["mkdocs_material", "just_the_docs", "gov_info"]
    )
    assert {(r.group, r.page) for r in results} == {
        ("docs", "mkdocs_material"),
        ("holdout", "just_the_docs"),
        ("holdout", "gov_info"),
    }
    groups = extract_quality.summary(results)
    assert groups["holdout"]["ours"]["pages"] == 2
    assert groups["all"]["ours"]["pages"] == 1  # all: the tuned groups only
    assert extract_quality.main(["--group", "holdout", "--page", "gov_info", "--repeat", "1", "--no-trafilatura"]) == 0


def test_extract_quality_run_without_trafilatura():
    results = extract_quality.run(repeat=1, with_trafilatura=False, names=["mkdocs_material", "empty_main"])
    assert [(r.page, r.extractor) for r in results] == [
        ("mkdocs_material", "ours"),
        ("mkdocs_material", "before"),
        ("empty_main", "ours"),
        ("empty_main", "before"),
    ]
    before = {r.page: r for r in results if r.extractor == "before"}
    # the baseline finds the MkDocs article; it keeps nothing of the page whose <main> is empty
    assert before["mkdocs_material"].f1 > 0.8 and before["mkdocs_material"].code_lines is not None
    assert before["empty_main"].empty and before["empty_main"].code_lines is None
    groups = extract_quality.summary(results)
    assert groups["all"]["before"]["pages"] == 2 and groups["general"]["before"]["empty"] == 1


def test_extract_quality_says_when_trafilatura_is_missing(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(extract_quality, "trafilatura_extractor", lambda: None)
    out = tmp_path / "figures.json"
    assert extract_quality.main(["--page", "sphinx_rtd", "--repeat", "1", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].startswith("trafilatura is not installed")
    figures = json.loads(out.read_text())
    assert set(figures["groups"]["docs"]) == {"ours", "before"}


def test_extract_quality_show_prints_the_outputs(capsys):
    assert extract_quality.main(["--page", "sphinx_rtd", "--repeat", "1", "--no-trafilatura", "--show"]) == 0
    printed = capsys.readouterr().out
    assert "===== docs/sphinx_rtd: ours\n# Quickstart" in printed
    assert "===== docs/sphinx_rtd: before\n# Quickstart" in printed


@pytest.mark.e2e
def test_extract_quality_command(tmp_path):
    out = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.extract_quality", "--no-trafilatura", "--repeat", "1",
         "--page", "docusaurus_br", "--page", "news_article", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "docs/docusaurus_br" in proc.stdout and "general/news_article" in proc.stdout
    figures = json.loads(out.read_text())
    assert {(p["page"], p["extractor"]) for p in figures["pages"]} == {
        (page, extractor) for page in ("docusaurus_br", "news_article") for extractor in ("ours", "before")
    }
    assert all(0 <= p["f1"] <= 1 and p["gold_words"] > 100 for p in figures["pages"])


def test_legacy_converter_is_frozen_apart_from_the_current_one():
    source = (ROOT / "bench" / "legacy_markdown.py").read_text()
    assert "crawler.lib.markdown" not in source.split('"""', 2)[2]  # no import of the live converter
    assert "650bd7f" in source.split('"""', 2)[1]


def test_the_converter_meets_the_quality_targets_on_the_evaluation_set():
    """The issue's targets, on the pages the converter was tuned on; the held-out pages
    at what they measured (a floor against regressions, not a proof)."""
    results = extract_quality.run(repeat=1, with_trafilatura=False)
    ours = extract_quality.summary([r for r in results if r.extractor == "ours"])
    docs, general, holdout = ours["docs"]["ours"], ours["general"]["ours"], ours["holdout"]["ours"]
    assert docs["recall"] >= 0.99 and docs["precision"] >= 0.95
    assert general["f1"] >= 0.96 and general["precision"] >= 0.94 and general["recall"] >= 0.97
    assert holdout["f1"] >= 0.95
    assert docs["empty"] == general["empty"] == holdout["empty"] == 0
    assert docs["code_lines"] == holdout["code_lines"] == 1.0  # every line of every code block

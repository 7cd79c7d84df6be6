import re

from crawler.cache import RunState
from crawler.cache.run_report import build_run_report, summary_line


def report(stats, empty_pages=None):
    return build_run_report(
        RunState(run_id="r1"),
        stats,
        spider="docs",
        finish_reason="finished",
        complete=True,
        extractor={"name": "x", "version": "1"},
        empty_pages=empty_pages,
    )


def test_pages_with_no_text_are_counted_listed_and_in_the_summary():
    empty = report({"pages/new": 3, "extraction/empty_input": 60}, [f"https://a.com/{n}" for n in range(50)])
    assert empty["pages_empty"] == 60 and len(empty["empty_pages"]) == 50
    assert summary_line(empty).endswith("; 60 pages with no text, not sent (`scrapy cache ls --empty`)")


def test_a_run_without_empty_pages_says_nothing_of_them():
    plain = report({"pages/new": 3})
    assert (plain["pages_empty"], plain["empty_pages"]) == (0, [])
    assert "no text" not in summary_line(plain) and summary_line(plain).endswith("0 errors")


def test_pages_whose_main_content_was_widened_are_counted_and_in_the_summary():
    widened = report({"pages/new": 3, "docs/selection_widened": 2, "extraction/empty_input": 1})
    assert widened["pages_widened"] == 2
    assert summary_line(widened).endswith(
        "; 1 page with no text, not sent (`scrapy cache ls --empty`); 2 pages widened (`scrapy cache ls --widened`)"
    )


def test_a_run_without_widened_pages_says_nothing_of_them():
    plain = report({"pages/new": 3})
    assert plain["pages_widened"] == 0 and "widened" not in summary_line(plain)


def test_the_304s_are_counted_against_the_requests_not_the_pages():
    # a page reached by two URLs (/ and /index.html) answers two 304s: 7 unchanged pages,
    # 8 not modified, out of 12 requests (robots.txt, the sitemap, a stylesheet)
    recrawl = report({"pages/unchanged": 7, "revalidation/not_modified": 8, "downloader/request_count": 12})
    assert (recrawl["responses_not_modified"], recrawl["requests"]) == (8, 12)
    assert "7 unchanged, 0 removed; 8 of 12 requests not modified (304); " in summary_line(recrawl)


def test_a_partial_run_that_removed_a_page_on_evidence_says_both_without_contradiction():
    # a crawl trap made the run partial; a known page answered 404 (evidence): removed
    run = RunState(run_id="r1")
    run.mark_incomplete("crawl trap: links past CRAWL_TRAP_MAX_PER_PATTERN not followed")
    stats = {"pages/unchanged": 525, "removal/pages_removed": 1}
    partial = build_run_report(run, stats, spider="docs", finish_reason="finished", complete=False)
    line = summary_line(partial)
    assert ", partial, no page marked removed for not being reached: crawl trap" in line
    assert "525 unchanged, 1 removed;" in line


def test_the_summary_line_stays_short_and_counts_what_does_not_fit():
    from crawler.cache.run_report import SUMMARY_MAX

    busy = report(
        {
            "pages/new": 3,
            "docs/not_found_pages": 12,
            "extraction/empty_input": 4,
            "docs/selection_widened": 2,
            "docs/named_out_pages": 2,
            "docs/named_out_words": 40,
        }
    )
    busy["mistakes"] = [
        {"kind": "setting", "name": f"DOWNLOAD_DELAY{'Y' * n}", "meant": "DOWNLOAD_DELAY"} for n in (1, 2)
    ]
    busy["converter"] = {"id": "markdown/13;links=text", "pages_pending": 3, "tokens_pending": 1200}
    where = "extracted-docs/runs/20261129T031709000Z-5a5a5a.json"
    line = summary_line(busy, where=where)
    assert len(line.split("; report ")[0]) <= SUMMARY_MAX, line
    # what was asked and ignored is always said; what does not fit is counted
    assert "ignored: DOWNLOAD_DELAYY, DOWNLOAD_DELAYYY;" in line
    assert re.search(r"; \d+ more in the report; report extracted-docs/runs/", line), line


def test_a_failed_run_says_what_failed_and_what_was_ignored():
    failed = report({})
    failed.update(failed="no page could be crawled: the start page http://a/en/ answered 404 Not Found", complete=False)
    failed["mistakes"] = [{"kind": "spider argument", "name": "maxpages", "meant": "max_pages"}]
    line = summary_line(failed)
    assert line.startswith("run r1 FAILED (finished")
    assert line.endswith(
        "): no page could be crawled: the start page http://a/en/ answered 404 Not Found"
        "; 0 errors; ignored: -a maxpages (max_pages?)"
    )

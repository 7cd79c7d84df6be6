import pytest
from scrapy.utils.misc import build_from_crawler

from crawler.choices import REDO_STEPS, RunChoices, run_choices
from crawler.extensions.closing import ClosingStages
from tests.crawl import run_crawl


def test_steps_and_dry_run_from_spider_arguments():
    assert RunChoices.parse(None, None) == RunChoices()
    assert RunChoices.parse(",".join(REDO_STEPS), "no") == RunChoices(frozenset(REDO_STEPS), False)
    assert RunChoices.parse(["render"], True).redo == {"render"}
    with pytest.raises(ValueError, match=r"^Spider argument dry_run must be true or false, got 'maybe'$"):
        RunChoices.parse(None, "maybe")


def test_a_crawl_reads_them_from_its_spider(make_crawler):
    crawler = make_crawler(spider_args={"redo": "download,extraction", "dry_run": "true"}, cache=False)
    assert run_choices(crawler) == RunChoices(frozenset({"download", "extraction"}), True)
    assert run_choices(make_crawler(cache=False)) == RunChoices()


def test_a_wrong_step_stops_the_crawl_at_start(make_crawler):
    with pytest.raises(ValueError, match=r"^redo='extract': each step one of download, render, extraction, vectors$"):
        build_from_crawler(ClosingStages, make_crawler(spider_args={"redo": "extract"}))


@pytest.mark.e2e
def test_a_wrong_step_is_one_line_and_exit_1(site, tmp_path):
    result = run_crawl(site.url + "/", tmp_path / "cache", args={"redo": "extract"})
    assert result.returncode == 1
    assert "Crawl not started: redo='extract': each step one of download, render, extraction, vectors" in result.stderr
    assert "Traceback" not in result.stderr and site.log == []

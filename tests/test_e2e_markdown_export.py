"""End-to-end: the markdown export round-trips. Real crawls of a local site with
MARKDOWN_EXPORT_DIR set: every page's file holds what ``scrapy cache show --content``
prints for it; after one page is edited and one removed, the recrawl rewrites the first,
deletes the second and leaves every other file as it was; ``scrapy cache export
--markdown`` from scratch gives the same tree."""

from __future__ import annotations

import json
import subprocess

from crawler.lib.mdfiles import front_matter_url, index_entries
from tests.crawl import ROOT, assert_ok, cache_command, crawl_env, run_crawl, scrapy_command, stat
from tests.helpers import export_stamps, export_tree


def assert_round_trip(cache, out):
    """Each live page has one file, whose body is what `scrapy cache show URL --content`
    prints (a process of its own); the index lists exactly those files."""
    pages = json.loads(cache_command(cache, "ls", "--limit", "0", "--json"))
    live = {page["url"] for page in pages if page["status"] != "removed"}
    files = {path: data.decode() for path, data in export_tree(out).items() if path != "index.md"}
    urls = {front_matter_url(text): path for path, text in files.items()}
    assert set(urls) == live
    for url, path in urls.items():
        assert files[path].split("\n---\n", 1)[1] == cache_command(cache, "show", url, "--content"), path
    assert sorted(index_entries(export_tree(out)["index.md"].decode())) == sorted(files)
    return urls


def test_the_markdown_export_follows_each_run_and_equals_a_whole_export(site, tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "md"
    settings = {"MARKDOWN_EXPORT_DIR": str(out)}
    first = assert_ok(run_crawl(site.url + "/", cache, settings=settings))
    assert "Markdown export " in first.log and stat(first, "mdexport/files_written") == 6
    urls = assert_round_trip(cache, out)
    install, api = urls[site.url + "/guide/install.html"], urls[site.url + "/api.html"]
    # the file names the page to `scrapy cache show`
    assert (
        cache_command(cache, "show", str(out / install), "--content")
        == export_tree(out)[install].decode().split("\n---\n", 1)[1]
    )

    before = export_stamps(out)
    site.edit("/guide/install.html", "Run pip install example==2.0 to install it.")
    site.remove("/api.html")  # the home page still links to it: it answers 404
    second = assert_ok(run_crawl(site.url + "/", cache, settings=settings))
    assert {c["url"]: c["status"] for c in second.report["changes_sample"]} == {
        site.url + "/guide/install.html": "changed",
        site.url + "/api.html": "removed",
    }
    assert (stat(second, "mdexport/files_written"), stat(second, "mdexport/files_removed")) == (1, 1)
    after = export_stamps(out)
    assert b"example==2.0" in (out / install).read_bytes() and after[install] != before[install]
    assert api not in after
    unchanged = set(before) - {install, api, "index.md"}
    assert len(unchanged) == 4 and {path: after[path] for path in unchanged} == {
        path: before[path] for path in unchanged
    }
    assert_round_trip(cache, out)

    # every page extracted again: each is changed in the run's list, its text is not: no file written
    third = assert_ok(run_crawl(site.url + "/", cache, settings=settings, args={"redo": "extraction"}))
    assert {c["status"] for c in third.report["changes_sample"]} == {"changed"} and len(
        third.report["changes_sample"]
    ) == 5
    assert stat(third, "mdexport/files_written") == 0 and export_stamps(out) == after

    # a whole export from scratch: the same tree, in a process of its own
    fresh = tmp_path / "fresh"
    command = scrapy_command(["cache", "export", "--markdown", str(fresh)], cache, {})
    done = assert_ok(subprocess.run(command, cwd=ROOT, env=crawl_env(), capture_output=True, text=True, timeout=120))
    assert done.stdout.startswith(f"Exported 5 pages to {fresh}: 5 files written")
    assert export_tree(fresh) == export_tree(out)
    again = json.loads(cache_command(cache, "export", "--markdown", str(out), "--json"))
    assert (again["written"], again["removed"]) == (0, 0) and export_stamps(out) == after


def test_a_crawl_whose_export_directory_is_a_file_does_not_start(site, tmp_path):
    cache, a_file = tmp_path / "cache", tmp_path / "a-file"
    a_file.write_text("x")
    result = run_crawl(site.url + "/", cache, settings={"MARKDOWN_EXPORT_DIR": str(a_file)})
    assert result.returncode == 1 and "Traceback" not in result.log
    assert f"Crawl not started: The markdown export's directory {a_file}: {a_file} is not a directory" in result.log
    assert site.log == [] and a_file.read_text() == "x"

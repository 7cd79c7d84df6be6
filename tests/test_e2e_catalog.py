"""End-to-end: the content-hash pipeline on another spider's items (a data catalogue)."""

from __future__ import annotations

import itertools

import pytest

from tests.crawl import run_crawl
from tests.site import Raw, Site

VIEWS = itertools.count()


def dataset_page(title, description, tags, publisher="Statistics Office"):
    tag_html = "".join(f'<span class="tag">{t}</span>' for t in tags)
    return (
        f"<html><body><h1>{title}</h1><div class='description'>{description}</div>"
        f"<div class='tags'>{tag_html}</div><p class='publisher'>{publisher}</p>"
        f"<p class='views'>{next(VIEWS)} views</p></body></html>"
    ).encode()


class Catalogue(Site):
    def __init__(self):
        super().__init__(validators="none", noise=False)
        self.datasets = {
            "population": ("Rwanda Population 2023", "Census counts by district.", ["population", "rwanda"]),
            "rainfall": ("Rainfall", "Monthly rainfall  per station.", ["climate", "weather"]),
            "schools": ("Schools", "List of primary schools.", ["education"]),
        }

    def respond(self, path, headers):
        if path == "/datasets":
            links = "".join(f'<a class="dataset" href="/dataset/{k}">{k}</a>' for k in self.datasets)
            return 200, {"Content-Type": "text/html"}, f"<html><body>{links}</body></html>".encode()
        if path.startswith("/dataset/") and path.split("/")[-1] in self.datasets:
            return 200, {"Content-Type": "text/html"}, dataset_page(*self.datasets[path.split("/")[-1]])
        return super().respond(path, headers)


@pytest.fixture
def catalogue():
    served = Catalogue().start()
    served.raw["/robots.txt"] = Raw(b"User-agent: *\nAllow: /\n", "text/plain")
    yield served
    served.stop()


def test_catalog_items_created_updated_unchanged(catalogue, tmp_path):
    cache = tmp_path / "cache"
    first = run_crawl(catalogue.url + "/datasets", cache, spider="catalog")
    assert first.returncode == 0, first.stderr[-2000:]
    assert (first.report["pages_new"], len(first.calls)) == (3, 3)
    # the extractor reads the content-defining fields
    assert first.report["extractor_calls"] == 3

    # same metadata, tags reordered, white space changed, view counter moved on
    catalogue.datasets["rainfall"] = ("Rainfall", "Monthly rainfall per station. ", ["weather", "climate"])
    second = run_crawl(catalogue.url + "/datasets", cache, spider="catalog")
    assert second.returncode == 0
    assert (second.report["pages_unchanged"], second.report["pages_changed"], second.calls) == (3, 0, [])

    # an updated dataset: same URL, new title; another with a new publisher only (not
    # content: CONTENT_HASH_FIELDS); a new dataset
    catalogue.datasets["population"] = (
        "Rwanda Population 2024",
        "Census counts by district.",
        ["population", "rwanda"],
    )
    catalogue.datasets["schools"] = ("Schools", "List of primary schools.", ["education"], "Ministry of Education")
    catalogue.datasets["roads"] = ("Roads", "Road network.", ["transport"])
    third = run_crawl(catalogue.url + "/datasets", cache, spider="catalog")
    report = third.report
    assert (report["pages_new"], report["pages_changed"], report["pages_unchanged"]) == (1, 1, 2)
    assert sorted(u.rsplit("/", 1)[-1] for u in third.calls) == ["population", "roads"]

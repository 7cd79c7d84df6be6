"""The ``catalog`` spider: the datasets of a data catalogue.

Shows that the content-hash pipeline works for items of any spider: a dataset's
content is its title, description and tags (``CONTENT_HASH_FIELDS``), not its page (a
view counter on it changes nothing); the publisher goes out with the item (feeds) but is
not part of its content, so caches made before keep their hashes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import scrapy

from crawler.items import DatasetItem
from crawler.spiders.arguments import split_arg

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from scrapy.http import Response


class CatalogSpider(scrapy.Spider):
    """``scrapy crawl catalog -a start_urls=URL``: follows ``a.dataset`` links from
    the listing pages (and ``a.next`` pagination), one item per dataset page
    (``h1``, ``.description``, ``.tag`` elements, ``.publisher``)."""

    name = "catalog"
    custom_settings = {"CONTENT_HASH_FIELDS": ["title", "description", "tags"]}

    def __init__(self, start_urls: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = split_arg(start_urls)
        if not self.start_urls:
            raise ValueError("The catalog spider needs -a start_urls=URL[,URL...]")

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse)

    def parse(self, response: Response) -> Iterator[scrapy.Request]:
        for href in response.css("a.dataset::attr(href)").getall():
            yield response.follow(href, callback=self.parse_dataset)
        for href in response.css("a.next::attr(href)").getall():
            yield response.follow(href, callback=self.parse)

    def parse_dataset(self, response: Response) -> Iterator[DatasetItem]:
        yield DatasetItem(
            url=response.url,
            title=(response.css("h1::text").get() or "").strip(),
            description=" ".join(response.css(".description ::text").getall()).strip(),
            tags=[t.strip() for t in response.css(".tag::text").getall() if t.strip()],
            publisher=(response.css(".publisher::text").get() or "").strip(),
        )

"""A plain spider of a user's own, for tests: one ``{url, title, text}`` item a page,
its text the page's paragraphs one per block, the site's header lines first."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy


class TextItemsSpider(scrapy.Spider):
    name = "text_items"

    def __init__(self, start_urls: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = start_urls.split(",")

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.start_urls:
            yield scrapy.Request(url)

    def parse(self, response: scrapy.http.Response) -> Iterator[Any]:
        paragraphs = [" ".join(" ".join(p.css("::text").getall()).split()) for p in response.css("body p")]
        yield {
            "url": response.url,
            "title": response.css("title::text").get(default=""),
            "text": "\n\n".join(p for p in paragraphs if p),
        }
        yield from response.follow_all(css="a")

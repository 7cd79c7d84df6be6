"""The reference of the recrawl benchmark: a minimal spider on plain Scrapy that
follows the same links as the docs spider (every link of every page of the site) and
yields one small item per page. Run outside the project (no ``scrapy.cfg``), with
``HTTPCACHE_ENABLED`` and ``RFC2616Policy`` it revalidates every page on a recrawl.

    scrapy runspider bench/follow_spider.py -a start_url=http://127.0.0.1:PORT/ [-a seen=true]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import scrapy
from scrapy.linkextractors import LinkExtractor

if TYPE_CHECKING:
    from collections.abc import Iterator

    from scrapy.http import Response


class FollowSpider(scrapy.Spider):
    name = "follow"

    def __init__(self, start_url: str = "", seen: str = "false", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = [start_url]
        self.allowed_domains = [urlsplit(start_url).hostname or ""]
        self.links = LinkExtractor()
        #: ``-a seen=true``: a link requested already is not yielded again (the
        #: duplicate filter would drop it), as the docs spider does
        self.seen: set[str] | None = set() if seen == "true" else None

    def parse(self, response: Response) -> Iterator[Any]:
        yield {"url": response.url, "title": response.css("title::text").get()}
        for link in self.links.extract_links(response):
            if self.seen is not None:
                if link.url in self.seen:
                    continue
                self.seen.add(link.url)
            yield scrapy.Request(link.url, callback=self.parse)

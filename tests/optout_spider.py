"""A docs spider that opts its API page out of skipping (``dont_dedup``), for tests."""

from crawler.spiders.docs import DocsSpider


class OptOutSpider(DocsSpider):
    name = "optout"

    def follow_links(self, response, depth):
        for request in super().follow_links(response, depth):
            if request.url.endswith("/api.html"):
                request.meta["dont_dedup"] = True
            yield request

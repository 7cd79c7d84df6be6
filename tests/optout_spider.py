"""A docs spider whose API page is requested unconditionally and extracted again
(``dont_revalidate``, ``force_extraction``), for tests."""

from crawler.spiders.docs import DocsSpider


class OptOutSpider(DocsSpider):
    name = "optout"

    def follow_links(self, urls, depth, linking=None):
        for request in super().follow_links(urls, depth, linking):
            if request.url.endswith("/api.html"):
                request.meta.update(dont_revalidate=True, force_extraction=True)
            yield request

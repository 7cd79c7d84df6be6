"""Signals of this project, sent through ``crawler.signals`` like Scrapy's own."""

#: Sent (and awaited) at the closing stage once every page of the crawl is recorded
#: and before any extraction. Arguments: ``cache`` (:class:`crawler.cache.Cache`).
#: Handlers may set ``content["clean"]`` for pages whose extractor input they clean
#: (the domain boilerplate analysis does).
pages_gathered = object()

#: Sent (and awaited) after the extraction phase. Arguments: ``cache``, ``report``
#: (the run report dict, which handlers may add keys to before it is written).
extraction_finished = object()

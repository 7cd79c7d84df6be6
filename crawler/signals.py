"""Signals of this project, sent through ``crawler.signals`` like Scrapy's own."""

#: Sent (and awaited) by the report stage (:class:`crawler.stages.report.ReportStage`)
#: once every stage has run, before the run report is written. Arguments: ``cache``
#: (:class:`crawler.cache.Cache`), ``report`` (the run report dict): components that
#: are not stages (RenderMiddleware, LLMExtractor) add their sections to it.
run_report = object()

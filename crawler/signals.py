"""Signals of this project, sent through ``crawler.signals`` like Scrapy's own."""

#: Sent (and awaited) by the report stage (:class:`crawler.stages.report.ReportStage`)
#: once every stage has run, before the run report is written. Arguments: ``cache``
#: (:class:`crawler.cache.Cache`), ``report`` (the run report dict): components that
#: are not stages (RenderMiddleware, LLMExtractor) add their sections to it.
run_report = object()

#: Sent (and awaited) by :class:`crawler.extensions.closing.ClosingStages` at a crawl's
#: close, once every page of the crawl is recorded and committed to the store, before
#: the run report. Arguments: ``cache`` (:class:`crawler.cache.Cache`), ``run``
#: (:class:`crawler.stages.StageRun`: how the crawl went, the spider's scope). A crawl
#: process of a shared-frontier run writes its part of the run then.
run_recorded = object()

#: Sent (and awaited) by the report stage once the run report of a crawl, or of a
#: shared-frontier run's processing (``scrapy process --run``), is written: not for
#: ``scrapy process`` of the stored pages nor for one crawl process of a
#: shared-frontier run. Arguments: ``report`` (the run report dict: its change list is
#: the store's, ``iter_run_changes(report["run_id"])``), ``summary`` (its summary
#: line). The change feeds and the webhook (:mod:`crawler.extensions.changefeeds`,
#: :mod:`crawler.extensions.webhook`) send it on.
run_reported = object()

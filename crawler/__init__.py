"""Incremental recrawls for LLM pipelines, as a Scrapy add-on
(``ADDONS = {"crawler.addons.IncrementalAddon": 100}``) and this project's spiders."""

__version__ = "0.2.0"

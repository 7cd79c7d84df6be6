"""The algorithms over a page's text: pure functions of plain values, tested directly
and benchmarked alone.

Here: the converter (``pagetext`` and what it uses), encoding sniffing, URL
canonicalization, hashes, the boilerplate analysis, markdown blocks and chunks, token
estimates. Not here: anything that reads settings, a crawler, the cache or the network,
and the plumbing around calls (:mod:`crawler.support`). A module here imports only this
package (``tests/test_imports.py``), so it can be tested without Scrapy.
"""

"""The algorithms over a page's text: pure functions of plain values, tested directly
and benchmarked alone.

What belongs here: turning a page into the text the extractor reads (``pagetext``, the
converter: ``maincontent`` over ``pagewalk``, ``chrome`` and ``furniture``, written by
``markdown``, which asks ``furniture`` for a caption's closing photo credit; both ask
``nodes`` and ``css`` what a reader sees; ``deephtml`` for pages nested too deep to
parse), what a body really is (``sniff``), URL canonicalization (``urls``), content
hashes (``hashing``), the domain boilerplate analysis (``boilerplate``), markdown
blocks, outlines and chunks (``blocks``, ``outline``, ``chunking``), token estimates
(``tokens``) and feature-hashing vectors (``featurehash``).

What does not: anything that reads settings, a crawler, the cache or the network, and
the plumbing around calls and output (retries, rate limits, secrets, progress, signals,
tables), which is in :mod:`crawler.support`. A module here imports only other modules
of this package (``tests/test_imports.py``).
"""

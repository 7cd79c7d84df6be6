"""The plumbing the components share: nothing of it reads or changes a page's text.

What belongs here: retries and rate limits of HTTP APIs (``backoff``, ``ratelimit``,
``openai_errors``), the secrets this process read and their masking (``secrets``),
validation of an LLM's answers against a JSON Schema (``json_schema``), signals during
the closing phase (``interrupt``), and what a user reads: progress lines (``progress``),
plain-text tables (``tables``) and counts in words (``plural``).

What does not: the algorithms over a page's text, in :mod:`crawler.lib`, and anything
that reads settings, a crawler or the cache. A module here imports only other modules
of this package (``tests/test_imports.py``).
"""

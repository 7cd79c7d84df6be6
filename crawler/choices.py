"""One run's choices: which steps it does again for every page, and whether it only
counts what it would send. They are spider arguments, read as Scrapy reads
``-a user_agent=...`` (``scrapy crawl docs -a redo=extraction -a dry_run=true``), or
``scrapy process --redo/--dry-run``: never settings, which a project keeps for every run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from crawler.spiders.arguments import bool_arg, split_arg

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

#: the steps a run can do again for every page, in the order a page meets them:
#: a download without validators (the revisit schedule still learns), a rendering,
#: an extractor call, the chunks' embeddings
REDO_STEPS = ("download", "render", "extraction", "vectors")


@dataclass(frozen=True)
class RunChoices:
    redo: frozenset[str] = frozenset()
    dry_run: bool = False

    @classmethod
    def parse(cls, redo: Any = None, dry_run: Any = None) -> RunChoices:
        """From spider arguments (strings) or values.

        >>> choices = RunChoices.parse("extraction, vectors", "true")
        >>> sorted(choices.redo), choices.dry_run
        (['extraction', 'vectors'], True)
        >>> RunChoices.parse("extract")
        Traceback (most recent call last):
        ...
        ValueError: redo='extract': each step one of download, render, extraction, vectors
        """
        steps = split_arg(redo)
        for step in steps:
            if step not in REDO_STEPS:
                raise ValueError(f"redo={step!r}: each step one of {', '.join(REDO_STEPS)}")
        return cls(frozenset(steps), dry_run not in (None, "") and bool_arg("dry_run", dry_run))


def run_choices(crawler: Crawler) -> RunChoices:
    """The choices of ``crawler``'s run, from its spider's arguments (or its spider
    class's attributes, before the spider is made)."""
    spider = getattr(crawler, "spider", None) or getattr(crawler, "spidercls", None)
    return RunChoices.parse(getattr(spider, "redo", None), getattr(spider, "dry_run", None))

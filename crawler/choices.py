"""One run's choices: which steps it does again for every page, and whether it only
counts what it would send. They are spider arguments, read as Scrapy reads
``-a user_agent=...`` (``scrapy crawl docs -a redo=extraction -a dry_run=true``), or
``scrapy process --redo/--dry-run``: never settings, which a project keeps for every run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

#: the steps a run can do again for every page, in the order a page meets them:
#: a download without validators (the revisit schedule still learns), a rendering,
#: an extractor call, the chunks' embeddings
REDO_STEPS = ("download", "render", "extraction", "vectors")
#: the spider arguments that carry them
CHOICES = ("redo", "dry_run")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


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
        steps = redo.split(",") if isinstance(redo, str) else list(redo or ())
        steps = [step.strip() for step in steps if step.strip()]
        for step in steps:
            if step not in REDO_STEPS:
                raise ValueError(f"redo={step!r}: each step one of {', '.join(REDO_STEPS)}")
        if isinstance(dry_run, str):
            if dry_run.strip().lower() not in _TRUE | _FALSE:
                raise ValueError(f"dry_run={dry_run!r}: true or false")
            dry_run = dry_run.strip().lower() in _TRUE
        return cls(frozenset(steps), bool(dry_run))


def run_choices(crawler: Crawler) -> RunChoices:
    """The choices of ``crawler``'s run, from its spider's arguments (or its spider
    class's attributes, before the spider is made)."""
    spider = getattr(crawler, "spider", None) or getattr(crawler, "spidercls", None)
    return RunChoices.parse(getattr(spider, "redo", None), getattr(spider, "dry_run", None))

"""The revisit schedule of a crawl, from its settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.config import ADDON_PRIORITY, defaults, typed
from crawler.incremental.revisit import RevisitPolicy

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings


def revisit_policy(settings: BaseSettings) -> RevisitPolicy | None:
    """The crawl's revisit schedule (``REVISIT_*``); None when it is off
    (``REVISIT_ENABLED``). In a shared-frontier run (``FRONTIER_ENABLED``)
    the processes decide alike through the run's share
    (:class:`crawler.frontier.revisit.SharedRevisit`)."""
    read = typed(settings)
    if not read.getbool("REVISIT_ENABLED"):
        return None
    try:
        return RevisitPolicy(
            min_interval=read.getfloat("REVISIT_MIN_INTERVAL"),
            max_staleness=read.getfloat("REVISIT_MAX_STALENESS"),
            sample=read.getfloat("REVISIT_SAMPLE"),
            trust_evidence=read.getint("REVISIT_TRUST_EVIDENCE"),
        )
    except ValueError as exc:
        raise ValueError(f"Invalid revisit settings: {exc}") from None


def idle_revisit_settings(settings: BaseSettings) -> list[str]:
    """The ``REVISIT_*`` settings set by the user (project settings, ``-s``) while the
    schedule is off (``REVISIT_ENABLED``): read by nothing, so a crawl warns of them.

    >>> from scrapy.settings import Settings
    >>> idle_revisit_settings(Settings({"REVISIT_MIN_INTERVAL": "abc", "DOWNLOAD_DELAY": 1}))
    ['REVISIT_MIN_INTERVAL']
    >>> idle_revisit_settings(Settings({"REVISIT_MIN_INTERVAL": 2, "REVISIT_ENABLED": True}))
    []
    >>> idle_revisit_settings(Settings({"REVISIT_ENABLE": True}))  # a misspelt name: "Unknown setting" says it
    []
    """
    if typed(settings).getbool("REVISIT_ENABLED"):
        return []
    return sorted(
        name
        for name in settings
        if isinstance(name, str)
        and name.startswith("REVISIT_")
        and name != "REVISIT_ENABLED"
        and name in defaults()
        and (settings.getpriority(name) or 0) > ADDON_PRIORITY
    )

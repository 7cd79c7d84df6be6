"""Runs one ``scrapy cache`` sub-command: its exit status, and what went wrong as one
line on standard error (a wrong setting: 2; no cache, a damaged or locked one, a
failed read: 1)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from crawler.cache import StoreSettingError
from crawler.cache.errors import CacheCorruptError, CacheMissingError
from crawler.cache.lock import CacheLockedError
from crawler.cachecli.changes import diff
from crawler.cachecli.find import caches_below
from crawler.cachecli.pages import export, ls, show
from crawler.cachecli.stats import stats
from crawler.cachecli.upkeep import invalidate, prune, verify

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from scrapy.settings import BaseSettings

SUBCOMMANDS: dict[str, Callable[[BaseSettings, argparse.Namespace], int]] = {
    "stats": stats,
    "ls": ls,
    "show": show,
    "diff": diff,
    "invalidate": invalidate,
    "prune": prune,
    "verify": verify,
    "export": export,
}


def run_subcommand(name: str, settings: BaseSettings, opts: argparse.Namespace) -> int:
    """Sub-command ``name``'s exit status (a UsageError goes up to Scrapy, which prints
    the usage)."""
    try:
        return SUBCOMMANDS[name](settings, opts)
    except BrokenPipeError:
        # the reader stopped reading (`scrapy cache ls | head`): not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except StoreSettingError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    except CacheMissingError as exc:
        print(f"Error: {exc}{caches_below(settings.get('EXTRACTED_DOCS_DIR'))}", file=sys.stderr)
        return 1
    except (CacheCorruptError, CacheLockedError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1

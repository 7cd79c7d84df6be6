"""Runs one ``scrapy cache`` sub-command: its exit status, and what went wrong as one
line on standard error (a wrong setting: 2; no cache, a damaged or locked one, a
failed read: 1)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from scrapy.utils.misc import load_object

from crawler.cache import StoreSettingError
from crawler.cache.errors import CacheCorruptError, CacheMissingError
from crawler.cache.lock import CacheLockedError
from crawler.cachecli.find import caches_below

if TYPE_CHECKING:
    import argparse

    from scrapy.settings import BaseSettings

#: each sub-command's function ``(settings, opts) -> exit status``, imported when it runs:
#: ``stats`` needs neither the converter (diff) nor the maintenance (prune, verify)
SUBCOMMANDS = {
    "stats": "crawler.cachecli.stats.stats",
    "ls": "crawler.cachecli.pages.ls",
    "show": "crawler.cachecli.pages.show",
    "diff": "crawler.cachecli.changes.diff",
    "invalidate": "crawler.cachecli.upkeep.invalidate",
    "prune": "crawler.cachecli.upkeep.prune",
    "verify": "crawler.cachecli.upkeep.verify",
    "export": "crawler.cachecli.pages.export",
}


def run_subcommand(name: str, settings: BaseSettings, opts: argparse.Namespace) -> int:
    """Sub-command ``name``'s exit status (a UsageError goes up to Scrapy, which prints
    the usage)."""
    try:
        return int(load_object(SUBCOMMANDS[name])(settings, opts))
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

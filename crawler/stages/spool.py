"""Finished extractions the store could not take, kept on disk for the next run."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from crawler.cache.codecs import atomic_write_json, read_json
from crawler.cache.perms import private_mkdir

logger = logging.getLogger(__name__)

#: the spool folder's name, in the cache directory
SPOOL = "pending-extractions"


class Spool:
    """``pending-extractions/{url_hash}.json`` in the cache directory (``EXTRACTED_DOCS_DIR``),
    or ``{directory}.pending-extractions/`` beside it when the directory itself cannot be
    written: a finished extractor call whose result the store refused (a full disk, an
    unwritable ``extractions/``, PostgreSQL gone). The next run's extraction stage adopts
    each one whose input is still the page's, without a call, and removes the file once
    the store has it."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        base = Path(directory)
        self.folders = [base / SPOOL, base.parent / f"{base.name}.{SPOOL}"]

    def keep(self, url_hash: str, extraction: dict[str, Any]) -> Path | None:
        """Write ``extraction``; its path, or None when no folder could take it."""
        for folder in self.folders:
            try:
                private_mkdir(folder)  # 0700: an answer may hold private data, as extractions/
                path = folder / f"{url_hash}.json"
                atomic_write_json(path, extraction)
            except OSError:
                continue
            return path
        return None

    def load(self) -> dict[str, dict[str, Any]]:
        """Every kept extraction by page (the newest folder's wins); unreadable ones are skipped."""
        found: dict[str, dict[str, Any]] = {}
        for folder in reversed(self.folders):
            if not folder.is_dir():
                continue
            for path in sorted(folder.glob("*.json")):
                if path.name.startswith("."):
                    continue
                try:
                    data = read_json(path)
                except (OSError, ValueError) as exc:
                    logger.warning(
                        "Unreadable pending extraction %(path)s, skipped: %(exc)s", {"path": path, "exc": exc}
                    )
                    continue
                if isinstance(data, dict):
                    found[path.stem] = data
        return found

    def drop(self, url_hash: str) -> None:
        """The store has it now: the spooled copy goes."""
        for folder in self.folders:
            try:
                (folder / f"{url_hash}.json").unlink(missing_ok=True)
            except OSError:
                continue

"""The cache's pages as a folder of markdown files, one per page with text:
``scrapy cache export --markdown DIR`` writes it whole, the extension
:class:`crawler.extensions.mdexport.MarkdownExport` (``MARKDOWN_EXPORT_DIR``) keeps it in
step after each run. Which file a page has and what it holds: :mod:`crawler.lib.mdfiles`.

Everything is written inside the directory, under its lock (``DIR/.lock``: one export
at a time), each file to a temporary name in its folder and renamed (a reader never
sees half a file; the next whole export removes what a killed one left). A file is
written only when its bytes differ, so its mtime says when its page last changed in the
export. Only files this export wrote (a page file's front matter) are ever deleted, and
the folders their deletion empties. Files and folders are private to their user, as
the cache's are.
"""

from __future__ import annotations

import logging
import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.cache.lock import FileLock, LockHeldError
from crawler.cache.perms import mkdir_problem, private_mkdir
from crawler.cache.records import page_text
from crawler.lib.mdfiles import INDEX_HEADER, INDEX_NAME, index_entries, index_text, is_page_file, page_file, page_path
from crawler.lib.urls import canonical_url
from crawler.statuses import STATUS_REMOVED

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping

    from crawler.cache.ports import MarkdownStore
    from crawler.cache.records import PageContent

logger = logging.getLogger(__name__)

LOCK_NAME = ".lock"
#: a file being written: ``.<name>.<random>`` plus this
TEMP_SUFFIX = ".mdtmp"
#: pages whose markdown is read in one query
CONTENTS_PER_READ = 500
#: what is read of a file to tell whether this export wrote it
HEAD_BYTES = 64


@dataclass
class Exported:
    """What an export did: the pages its index lists, the files it wrote, found as they
    were, deleted, and the pages that have no file (no text)."""

    pages: int = 0
    written: int = 0
    unchanged: int = 0
    removed: int = 0
    without_text: int = 0


def about(record: Mapping[str, Any], content: Mapping[str, Any]) -> dict[str, Any]:
    """A page file's front matter: what the page's stored text says of itself (its URL
    and title when it was stored, its hash, when it was stored: the version `scrapy
    cache diff` shows), the record's where the content lacks one. Only a new text
    changes it: a URL recorded under another spelling of the page, an extraction that
    moves the record's ``last_changed`` (a crawl's ``-a redo=extraction``) rewrite no file."""
    fields = content.get("fields") or {}
    title = fields.get("title") if isinstance(fields.get("title"), str) else record.get("title")
    return {
        "url": content.get("url") or record.get("url"),
        "title": title,
        "content_hash": content.get("content_hash") or record.get("content_hash"),
        "last_changed": content.get("stored_at") or record.get("last_changed"),
    }


class MarkdownFolder:
    """The export directory ``directory`` (relative: to the current directory)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.root = Path(os.path.abspath(directory))
        self._real_root = ""

    def check(self) -> None:
        """A ValueError saying why the directory cannot be the export's: it, or a folder
        above it, is a file; the nearest that exists cannot be written; it holds an
        ``index.md`` this export did not write. Nothing is made or changed."""
        existing = next(path for path in (self.root, *self.root.parents) if os.path.lexists(path))
        if not existing.is_dir():
            raise ValueError(f"The markdown export's directory {self.root}: {existing} is not a directory")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise ValueError(f"The markdown export's directory {self.root}: {existing} is not writable")
        index = self.root / INDEX_NAME
        if os.path.lexists(index) and not (self._head(index) or "").startswith(INDEX_HEADER):
            raise ValueError(
                f"The markdown export's directory {self.root} holds an {INDEX_NAME} this export did not write: "
                "give another directory"
            )

    def export_all(self, store: MarkdownStore) -> Exported:
        """Every live page's file written (its text as it is now), the files of the
        pages that are gone or have no text deleted, the index written."""
        with self._writing():
            return self._all(store)

    def export_changes(self, store: MarkdownStore, changes: Iterable[Mapping[str, Any]]) -> Exported:
        """The files of a run's ``changes`` (the run report's: ``url_hash``, ``url``,
        ``status``) written or deleted, and the index updated; the whole folder when it
        has no index yet (its first run)."""
        with self._writing():
            text = self._text(self.root / INDEX_NAME)
            if text is None:
                return self._all(store)
            entries = index_entries(text)
            done = Exported()
            # a batch of changes at a time (a run's list may be the whole site's)
            unread = iter(changes)
            while batch := list(islice(unread, CONTENTS_PER_READ)):
                # each page as its record says now (a page no record holds any more: removed)
                records: dict[str, Mapping[str, Any]] = {
                    str(c.get("url_hash")): store.get_page(str(c.get("url_hash")))
                    or {"url": c.get("url"), "status": STATUS_REMOVED}
                    for c in batch
                }
                live = [url_hash for url_hash, record in records.items() if record.get("status") != STATUS_REMOVED]
                contents: dict[str, PageContent | None] = store.get_contents(live) if live else {}
                for url_hash, record in records.items():
                    if record.get("status") == STATUS_REMOVED:
                        path = self._path(record)
                        if path is not None:
                            entries.pop(path, None)
                            done.removed += self._remove(path)
                    else:
                        self._put(record, contents.get(url_hash), entries, done)
            self._write(INDEX_NAME, index_text(entries))
            done.pages = len(entries)
            return done

    # -- the work, under the lock ---------------------------------------------

    @contextmanager
    def _writing(self) -> Iterator[None]:
        self.check()
        try:
            private_mkdir(self.root)
        except OSError as exc:
            raise ValueError(
                f"Cannot make the markdown export's directory {self.root}: {mkdir_problem(self.root, exc)}"
            ) from None
        lock = FileLock(self.root / LOCK_NAME)
        try:
            lock.acquire()
        except LockHeldError as exc:
            raise ValueError(
                f"The markdown export in {self.root} is being written by another process ({exc.holder})"
            ) from None
        except OSError as exc:
            raise ValueError(f"Cannot write the markdown export in {self.root}: {exc.strerror or exc}") from None
        self._real_root = os.path.realpath(self.root)
        try:
            yield
        finally:
            lock.release()

    def _all(self, store: MarkdownStore) -> Exported:
        done = Exported()
        entries: dict[str, tuple[str, str]] = {}
        pages = ((h, r) for h, r in store.iter_pages() if r.get("status") != STATUS_REMOVED)
        while batch := list(islice(pages, CONTENTS_PER_READ)):
            contents = store.get_contents([url_hash for url_hash, _ in batch])
            for url_hash, record in batch:
                self._put(record, contents.get(url_hash), entries, done, taken=True)
        done.removed += self._remove_stale(set(entries))
        self._write(INDEX_NAME, index_text(entries))
        done.pages = len(entries)
        return done

    def _put(
        self,
        record: Mapping[str, Any],
        content: Mapping[str, Any] | None,
        entries: dict[str, tuple[str, str]],
        done: Exported,
        *,
        taken: bool = False,
    ) -> None:
        """The file of the page ``record`` written (or deleted: it has no text) and its
        line in ``entries``; ``taken``: a path already in ``entries`` is another page's."""
        path = self._path(record)
        if path is None:
            return
        text = page_text(content or {}, use_clean=False)
        if not text.strip():
            done.without_text += 1
            entries.pop(path, None)
            done.removed += self._remove(path)
            return
        if taken and path in entries:
            logger.warning(
                "%(url)s has the file of %(other)s (%(path)s): not exported",
                {"url": record.get("url"), "other": entries[path][1], "path": path},
            )
            return
        page = about(record, content or {})
        if self._write(path, page_file(page, text)):
            done.written += 1
        else:
            done.unchanged += 1
        entries[path] = (str(page["title"] or ""), str(page["url"]))

    def _path(self, record: Mapping[str, Any]) -> str | None:
        url = str(record.get("canonical_url") or canonical_url(str(record.get("url") or "")))
        try:
            return page_path(url)
        except ValueError as exc:
            logger.warning("%(error)s", {"error": exc})
            return None

    def _write(self, path: str, text: str) -> bool:
        """``text`` in the file ``path`` (relative to the directory), unless it holds it
        already; True when written."""
        target = self.root / path
        data = text.encode("utf-8", "replace")
        if not target.is_symlink() and self._bytes(target) == data:
            return False
        self._inside(target.parent)
        private_mkdir(target.parent)
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TEMP_SUFFIX, dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return True

    def _remove(self, path: str) -> int:
        """The file ``path`` deleted if this export wrote it, and the folders that leaves
        empty; 1 when deleted."""
        target = self.root / path
        if target.is_symlink() or not is_page_file(self._head(target) or ""):
            return 0
        self._inside(target.parent)
        target.unlink()
        self._tidy(target.parent)
        return 1

    def _remove_stale(self, keep: set[str]) -> int:
        """The page files not in ``keep`` and the temporary files of a killed export
        deleted, and the folders that leaves empty; how many page files."""
        removed = 0
        for folder, _, names in os.walk(self.root, topdown=False):
            for name in names:
                full = Path(folder, name)
                path = full.relative_to(self.root).as_posix()
                if name.startswith(".") and name.endswith(TEMP_SUFFIX) and not full.is_symlink():
                    full.unlink()
                    self._tidy(full.parent)
                elif name.endswith(".md") and path not in keep and path != INDEX_NAME:
                    removed += self._remove(path)
        return removed

    def _inside(self, folder: Path) -> None:
        """A ValueError when ``folder`` (or the part of it that exists) is outside the
        directory, through a symbolic link: nothing is written or deleted there."""
        existing = next(path for path in (folder, *folder.parents) if os.path.lexists(path))
        if not Path(os.path.realpath(existing)).is_relative_to(self._real_root):
            raise ValueError(f"{existing} leads out of {self.root} (a symbolic link): nothing written there")

    def _tidy(self, folder: Path) -> None:
        while folder != self.root and folder.is_relative_to(self.root):
            try:
                folder.rmdir()
            except OSError:  # not empty
                return
            folder = folder.parent

    @staticmethod
    def _bytes(path: Path) -> bytes | None:
        try:
            return path.read_bytes()
        except OSError:
            return None

    @staticmethod
    def _text(path: Path) -> str | None:
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    @staticmethod
    def _head(path: Path) -> str | None:
        try:
            with open(path, "rb") as handle:
                return handle.read(HEAD_BYTES).decode("utf-8", "replace")
        except OSError:
            return None

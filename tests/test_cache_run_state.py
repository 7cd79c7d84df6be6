"""Who writes each field of the run's state (crawler.cache.RunState): the modules its
docstring names, and no other (a new writer is a decision: say it there and here)."""

import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "crawler"

#: field -> the modules that write it. A crawl: one writer per field (the middleware,
#: the pipeline or the ledger it tells); ClosingStages fills the run of `scrapy process` (--run); `failed`
#: is said at the close by whoever saw the run fail
WRITERS = {
    "run_id": {"extensions/closing.py"},
    "seen": {"incremental/ledger.py", "extensions/closing.py"},
    "forced": {"pipelines/content_hash.py", "extensions/closing.py"},
    "gone": {"middlewares/revalidation.py", "extensions/closing.py"},
    # (a crawl's own: a shared run's processing removes such a spelling when not reached)
    "folded_away": {"incremental/ledger.py"},
    "fetched": {"middlewares/revalidation.py"},
    "domains": {"incremental/ledger.py", "extensions/closing.py"},
    "interrupted": {"extensions/closing.py"},
    "failed": {"extensions/closing.py", "stages/report.py", "stages/extraction.py", "frontier/worker.py"},
    "converter": {"incremental/ledger.py"},
    # lists that any component adds to, through RunState.mark_incomplete and note_mistake only
    "incomplete_reasons": set(),
    "mistakes": set(),
}


def writers(name: str) -> set[str]:
    """The modules with a write of ``<run state>.name`` (assigned, added to, deleted from)."""
    owner = r"(?:\.run|\bstate|\brun)"
    pattern = re.compile(
        rf"{owner}\.{name}(?:\.(?:add|update|pop|clear|discard|append|setdefault|remove)\(|\[[^\]]*\]\s*=(?!=)"
        rf"|\s*\+?=(?!=))|del\s+[\w.]*\b(?:run|state)\.{name}\["
    )
    return {
        str(path.relative_to(PACKAGE)) for path in sorted(PACKAGE.rglob("*.py")) if pattern.search(path.read_text())
    }


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_each_field_of_the_run_state_has_the_writers_its_docstring_names(name):
    assert writers(name) == WRITERS[name]


def test_every_field_is_listed():
    from dataclasses import fields

    from crawler.cache import RunState

    assert set(WRITERS) | {"started_at", "revisit"} == {f.name for f in fields(RunState)}

"""A page's status in a run, decided in one place from what the run found and what the
page's record says of earlier runs.

The crawl's pipeline asks :func:`run_status` when it records a page (and
:func:`never_reported` of a page a new converter reads differently); the extraction stage
asks :func:`paid_status` when it writes an extraction, made or adopted. A status is never
taken back afterwards:

- ``new``: never recorded, marked removed before (a page that returned), or recorded
  ``new`` by a run that ended without a report (killed) and not reported since;
- ``changed``: its text is not the recorded one, or its change was recorded by a run
  that ended without a report and not extracted since;
- ``unchanged``: anything else, until the run pays for its extraction (a failed one
  retried, an expired one, another extractor's): then ``changed``, or ``new`` when it
  had none: every page whose extraction a run made is in that run's change list.

Functions over records, no Scrapy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.cache.records import STATUS_CHANGED, STATUS_NEW, STATUS_REMOVED, STATUS_UNCHANGED

if TYPE_CHECKING:
    from collections.abc import Callable

    from crawler.cache.records import PageRecord

#: the history reason of a ``new`` event for a removed page seen again
RETURNED = "returned"
#: the history reason of a ``removed`` event for an index file spelling recorded as a
#: page of its own, then found to be its directory's page
FOLDED = "folded"


def never_reported(previous: PageRecord, reported: Callable[[str], bool]) -> bool:
    """A page recorded ``new`` by a run that ended without a run report (``reported``:
    whether a run id has one) and never extracted: no report counted it.

    >>> never_reported({"status": "new", "run_id": "r1"}, lambda run_id: False)
    True
    >>> never_reported({"status": "new", "run_id": "r1", "extraction": {}}, lambda run_id: False)
    False
    """
    return (
        previous.get("status") == STATUS_NEW
        and "extraction" not in previous
        and "extraction_error" not in previous
        and not reported(str(previous.get("run_id", "")))
    )


def _last_event(previous: PageRecord) -> dict[str, object]:
    history = previous.get("history") or []
    return dict(history[-1]) if history else {}


def run_status(previous: PageRecord | None, *, same: bool, reported: Callable[[str], bool]) -> str:
    """The status of a page this run records: ``previous`` its record before the run
    (``None``: never recorded), ``same`` whether its text is the recorded one,
    ``reported`` whether a run id has a run report.

    >>> no = lambda run_id: False
    >>> run_status(None, same=False, reported=no), run_status({"status": "removed"}, same=True, reported=no)
    ('new', 'new')
    >>> run_status({"status": "unchanged", "run_id": "r"}, same=True, reported=no)
    'unchanged'
    >>> changed = {"status": "changed", "run_id": "r", "history": [{"event": "changed"}]}
    >>> run_status(changed, same=True, reported=no), run_status(changed, same=True, reported=lambda r: True)
    ('changed', 'unchanged')
    """
    if previous is None or previous.get("status") == STATUS_REMOVED:
        return STATUS_NEW
    status, last = previous.get("status"), _last_event(previous)

    def unreported() -> bool:  # (asked last: reading a run's report is the one cost here)
        return not reported(str(previous.get("run_id", "")))

    # a removed page's return (its extraction kept) or a first recording, by a run
    # killed before its report: no report counted it
    came_back = last.get("event") == STATUS_NEW and last.get("reason") == RETURNED
    if status == STATUS_NEW and ((came_back and unreported()) or never_reported(previous, reported)):
        return STATUS_NEW
    if not same:
        return STATUS_CHANGED
    if status == STATUS_CHANGED and last.get("event") == STATUS_CHANGED and unreported():
        return STATUS_CHANGED  # its change recorded by a run killed before its report, not extracted since
    return STATUS_UNCHANGED


def paid_status(record: PageRecord, run_id: str, *, extracted_before: bool) -> str | None:
    """The status a page this run recorded takes when the run writes its extraction:
    ``None`` when it keeps its own (already new or changed, or recorded by another run).

    >>> paid_status({"status": "unchanged", "run_id": "r"}, "r", extracted_before=False)
    'new'
    >>> paid_status({"status": "unchanged", "run_id": "r"}, "r", extracted_before=True)
    'changed'
    >>> paid_status({"status": "changed", "run_id": "r"}, "r", extracted_before=True) is None
    True
    """
    if record.get("status") != STATUS_UNCHANGED or record.get("run_id") != run_id:
        return None
    return STATUS_CHANGED if extracted_before else STATUS_NEW

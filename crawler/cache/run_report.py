"""The run report: what one crawl (or ``scrapy process``) did, as a JSON-able dict
built from its stats; the stages add their sections."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from crawler.cache.records import STATUS_CHANGED, STATUS_NEW, STATUS_REMOVED, utcnow
from crawler.support.plural import plural
from crawler.support.progress import format_duration

if TYPE_CHECKING:
    from crawler.cache import RunState
    from crawler.cache.records import PageRecord

#: report key -> the Scrapy stat it copies
REPORT_STATS = {
    "pages_new": "pages/new",
    "pages_changed": "pages/changed",
    "pages_unchanged": "pages/unchanged",
    "pages_removed": "removal/pages_removed",
    "responses_not_modified": "revalidation/not_modified",
    "extractor_calls": "extraction/calls",
    "extraction_cache_hits": "extraction/cache_hits",
    "extraction_reused": "extraction/reused",
    "extraction_errors": "extraction/errors",
    "pages_empty": "extraction/empty_input",
    "pages_widened": "docs/selection_widened",
    "pages_named_out": "docs/named_out_pages",
    "words_named_out": "docs/named_out_words",
    "links_broken": "docs/not_found_pages",
    "pages_fetched": "revalidation/fetched",
    "requests": "downloader/request_count",
    "bytes_downloaded": "downloader/response_bytes",
}


def build_run_report(
    run: RunState,
    stats: dict[str, Any],
    *,
    spider: str,
    finish_reason: str,
    complete: bool,
    extractor: dict[str, str] | None = None,
    empty_pages: list[str] | None = None,
    finished_at: str | None = None,
    kind: str = "crawl",
) -> dict[str, Any]:
    """The run report of ``run``, its counts taken from the crawl's ``stats``.

    ``kind``: ``crawl``, or ``process`` (``scrapy process``: the stages on the stored
    pages, nothing fetched; ``pages_processed`` says how many). ``extractor`` and
    ``empty_pages`` (URLs of pages with no text to extract: the first of them; all are
    counted in ``pages_empty``) are the extraction stage's section.

    ``errors`` counts the errors logged while crawling (``log_count/ERROR``: failed
    items, crashed callbacks...) plus the failed extractions of the closing stage
    (Scrapy stops counting log lines when the spider closes).
    """
    report: dict[str, Any] = {
        "run_id": run.run_id,
        "kind": kind,
        "spider": spider,
        "started_at": run.started_at,
        "finished_at": finished_at or utcnow(),
        "finish_reason": finish_reason,
        "complete": complete,
        "incomplete_reasons": list(run.incomplete_reasons),
        "domains": sorted(run.domains),
        # what was asked and ignored (crawler.support.mistakes)
        "mistakes": [mistake.as_dict() for mistake in run.mistakes],
    }
    if extractor is not None:
        report["extractor"] = extractor
    for key, stat in REPORT_STATS.items():
        report[key] = int(stats.get(stat, 0) or 0)
    if kind == "process":
        report["pages_processed"] = int(stats.get("process/pages", 0) or 0)
    report["errors"] = int(stats.get("log_count/ERROR", 0) or 0) + report["extraction_errors"]
    if run.converter:
        report["converter"] = {
            **run.converter,
            "pages_pending": int(stats.get("converter/pages_pending", 0) or 0),
            "tokens_pending": int(stats.get("converter/tokens_pending", 0) or 0),
            "pages_upgraded": int(stats.get("converter/pages_upgraded", 0) or 0),
        }
    report["empty_pages"] = list(empty_pages or [])
    return report


#: the page statuses a run's change list (the store's ``changes`` table) names
CHANGE_STATUSES = (STATUS_NEW, STATUS_CHANGED, STATUS_REMOVED)
#: the change list's entries a run report keeps (``changes_sample``): the report stays
#: small whatever the run's size; the store lists them all (``iter_run_changes``)
CHANGES_SAMPLE = 100


def change_record(url_hash: str, record: PageRecord) -> dict[str, Any]:
    """One entry of a run's change list: the page's URL, ``url_hash``, status (new,
    changed, removed), content hash and extraction file (relative to the cache
    directory; None when the page has none, its last extraction failed or it had no
    text to extract).

    >>> change_record("ab", {"url": "http://a/", "status": "new", "content_hash": "c1",
    ...   "extraction": {"file": "extractions/ab.json"}})  # doctest: +NORMALIZE_WHITESPACE
    {'url': 'http://a/', 'url_hash': 'ab', 'status': 'new', 'content_hash': 'c1',
     'extraction_file': 'extractions/ab.json'}
    """
    ref = record.get("extraction")
    usable = ref is not None and not record.get("extraction_error") and not record.get("empty_input")
    return {
        "url": record.get("url"),
        "url_hash": url_hash,
        "status": record.get("status"),
        "content_hash": record.get("content_hash"),
        "extraction_file": ref.get("file") if usable and ref is not None else None,
    }


def converter_note(report: dict[str, Any]) -> str:
    """What the summary says of pages held back under a new converter ("" for none).

    >>> print(converter_note({"converter": {"id": "markdown/2;links=text", "pages_pending": 3,
    ...   "tokens_pending": 1200}}))  # doctest: +NORMALIZE_WHITESPACE
    3 pages' input differs under converter markdown/2;links=text (~1,200 tokens): -s
    CONVERTER_UPGRADE=apply
    """
    converter = report.get("converter") or {}
    if not converter.get("pages_pending"):
        return ""
    pages = converter["pages_pending"]
    whose = plural(pages, "page's", "pages'")
    return (
        f"{whose} input differs under converter {converter['id']} "
        f"(~{plural(converter['tokens_pending'], 'token', grouped=True)}): -s CONVERTER_UPGRADE=apply"
    )


#: the validators as people write them
VALIDATOR_NAMES = {"etag": "ETag", "last_modified": "Last-Modified"}


def distrusted_validators(signals: Any) -> dict[str, int]:
    """How many hosts each validator is distrusted on, from the run report's
    ``revisit.signals``.

    >>> distrusted_validators({"a.com": {"etag": {"state": "distrusted"}}, "b.com": {"etag": {"state": "trusted"}}})
    {'ETag': 1}
    """
    counts: dict[str, int] = {}
    for by_signal in (signals or {}).values():
        for name, label in VALIDATOR_NAMES.items():
            if isinstance(by_signal, dict) and (by_signal.get(name) or {}).get("state") == "distrusted":
                counts[label] = counts.get(label, 0) + 1
    return counts


def revisit_note(revisit: dict[str, Any] | None) -> str:
    """What the summary says of the revisit schedule's run ("" when it was off).

    >>> print(revisit_note({"enabled": True, "requests_saved": 380, "sampled": 8, "sampled_changed": 1,
    ...   "miss_rate": 0.125, "oldest_verified": "2026-11-01T02:00:00+00:00", "trusted_hosts": ["a.example"],
    ...   "signals": {"b.example": {"etag": {"state": "distrusted"}}}}))
    ... # doctest: +NORMALIZE_WHITESPACE
    380 pages not requested by their revisit schedule (counted unchanged, not checked); 8 more it
    would have skipped checked anyway, 1 changed (miss rate 12.5%); oldest check 2026-11-01; lastmod
    trusted on 1 host; ETag not believed on 1 host (-a redo=download checks every page)
    """
    if not revisit or not revisit.get("enabled"):
        return ""
    if not revisit.get("skipping", True):
        return "every page checked (-a redo=download), the revisit schedule learning from each"
    saved, sampled = int(revisit.get("requests_saved", 0)), int(revisit.get("sampled", 0))
    note = f"{saved} pages not requested by their revisit schedule (counted unchanged, not checked)"
    if sampled:
        rate = revisit.get("miss_rate") or 0.0
        changed = revisit.get("sampled_changed", 0)
        note += f"; {sampled} more it would have skipped checked anyway, {changed} changed (miss rate {rate:.1%})"
    if broken := int(revisit.get("broken_links_not_rechecked") or 0):
        note += f"; {broken} known broken link{'s' if broken != 1 else ''} not asked for again"
    if revisit.get("oldest_verified"):
        note += f"; oldest check {str(revisit['oldest_verified'])[:10]}"
    trusted = len(revisit.get("trusted_hosts") or [])
    if trusted:
        note += f"; lastmod trusted on {trusted} host{'s' if trusted != 1 else ''}"
    if distrusted := distrusted_validators(revisit.get("signals")):
        note += "; " + ", ".join(
            f"{name} not believed on {n} host{'s' if n != 1 else ''}" for name, n in distrusted.items()
        )
    return note + " (-a redo=download checks every page)" if saved or sampled or broken else note


#: the reason a run is partial when its extractor became unavailable: found after the
#: removal stage ran, it holds back no removal
EXTRACTION_STOPPED = "extraction stopped"
#: the reason a run is partial when it would have marked most of a site removed for not
#: being reached (RemovalStage, ``REMOVAL_MAX_SHARE``): the owner decides, a cron run fails
REMOVAL_HELD = "removal held"


def removal_held(report: dict[str, Any]) -> bool:
    """Did this run leave pages it no longer reached unmarked (a partial crawl)? An
    extraction that stopped (:data:`EXTRACTION_STOPPED`) makes a run partial after its
    removal stage ran: it holds back none.

    >>> removal_held({"complete": False, "incomplete_reasons": ["failed pages", "extraction stopped: 1 page"]})
    True
    >>> removal_held({"complete": False, "incomplete_reasons": ["extraction stopped: 1 page left for the next run"]})
    False
    """
    if report.get("complete", True) or report.get("kind", "crawl") == "process":
        return False
    return any(not str(r).startswith(EXTRACTION_STOPPED) for r in report.get("incomplete_reasons") or [])


def partial_note(report: dict[str, Any], shown: int | None = None) -> str:
    """Why a run is partial, as the summary line and ``scrapy cache stats`` say it (""
    for a complete run): its reasons (the first ``shown`` of them), less its finish
    reason (said beside it).

    >>> partial_note({"kind": "crawl", "complete": False,
    ...   "incomplete_reasons": ["finish reason shutdown", "failed pages", "renderings failed"]})
    ... # doctest: +NORMALIZE_WHITESPACE
    'partial, no page marked removed for not being reached: failed pages; renderings
    failed'
    >>> partial_note({"complete": True, "incomplete_reasons": []})
    ''
    >>> partial_note({"complete": False, "incomplete_reasons": ["extraction stopped: 3 pages left for the next run"]})
    'partial: extraction stopped: 3 pages left for the next run'
    >>> partial_note({"complete": False, "incomplete_reasons": ["removal held: 40 of 41 pages of a.com not reached"]})
    'partial: removal held: 40 of 41 pages of a.com not reached'
    """
    if report.get("complete", True):
        return ""
    reasons = [str(r) for r in report.get("incomplete_reasons") or [] if not str(r).startswith("finish reason ")]
    holding = [r for r in reasons if not r.startswith(EXTRACTION_STOPPED)]
    # a removal held for one site says so itself: another site's unreached pages went
    held_only = bool(holding) and all(r.startswith(REMOVAL_HELD) for r in holding)
    removal = ", no page marked removed for not being reached" if removal_held(report) and not held_only else ""
    return f"partial{removal}" + (f": {'; '.join(reasons[:shown])}" if reasons else "")


def render_note(report: dict[str, Any]) -> str:
    """What the summary says of failed renderings, and of pages recorded though their
    scripts failed to load ("" for none).

    >>> render_note({"render": {"errors": 3}})
    '3 renderings failed, rendered again next run (`scrapy cache ls --failed`)'
    >>> render_note({"render": {"errors": 0, "script_failed_recorded": {"https://a.org/": "https://a.org/j.js (404)"}}})
    "1 page recorded with scripts that failed to load, not hydrated (the run report's render.script_failed_recorded)"
    >>> render_note({"render": {"errors": 0, "script_failed_standing": ["https://a.org/", "https://a.org/b"]}})
    ... # doctest: +NORMALIZE_WHITESPACE
    "2 pages whose scripts failed to load run after run, read from the rendering stored when
    they loaded (the run report's render.script_failed_standing)"
    """
    render = report.get("render")
    if not isinstance(render, dict):
        return ""
    notes = []
    if failed := int(render.get("errors", 0)):
        notes.append(f"{plural(failed, 'rendering')} failed, rendered again next run (`scrapy cache ls --failed`)")
    if recorded := len(render.get("script_failed_recorded") or {}):
        notes.append(
            f"{plural(recorded, 'page')} recorded with scripts that failed to load, not hydrated "
            "(the run report's render.script_failed_recorded)"
        )
    if standing := len(render.get("script_failed_standing") or []):
        notes.append(
            f"{plural(standing, 'page')} whose scripts failed to load run after run, read from the rendering "
            "stored when they loaded (the run report's render.script_failed_standing)"
        )
    return "; ".join(notes)


def not_modified_note(report: dict[str, Any]) -> str:
    """The 304s, out of the requests sent: a count of responses, not of pages (a page
    reached by two URLs, ``/`` and ``/index.html``, answers two; robots.txt, a sitemap
    or a stylesheet are requests too), so it is never read against the page counts.

    >>> not_modified_note({"responses_not_modified": 8, "requests": 12})
    '8 of 12 requests not modified (304)'
    >>> not_modified_note({"responses_not_modified": 0})
    '0 not modified (304)'
    """
    count = report["responses_not_modified"]
    if not report.get("requests"):
        return f"{count} not modified (304)"
    return f"{count} of {plural(report['requests'], 'request')} not modified (304)"


def elapsed(report: dict[str, Any]) -> str:
    """How long the run took, from its report's times ("" when they cannot be read).

    >>> elapsed({"started_at": "2026-11-29T03:00:00Z", "finished_at": "2026-11-29T03:02:05Z"})
    '2m05s'
    """
    try:
        seconds = (parse_time(report["finished_at"]) - parse_time(report["started_at"])).total_seconds()
    except (KeyError, TypeError, ValueError):
        return ""
    return format_duration(max(0.0, seconds))


def parse_time(value: str) -> datetime:
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


#: how long the summary line may grow before the report's place (a path as long as the
#: user made it): about 300 characters; what does not fit is counted, and the run report
#: and ``scrapy cache stats`` say it all
SUMMARY_MAX = 320


def shortened(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a word, marked.

    >>> shortened("failed pages; sitemap failed; robots.txt failed", 31)
    'failed pages; sitemap failed…'
    """
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(";,") + "…"


def summary_notes(report: dict[str, Any]) -> list[str]:
    """What the summary line adds to the counts, the weightiest first: what was asked
    and ignored, an interruption, then what a command lists page by page."""
    notes = []
    if mistakes := report.get("mistakes"):
        # one is named with what it was likely meant to be; several, by name (the
        # warnings and `scrapy cache stats` say the rest)
        shown = mistake_short(mistakes[0]) if len(mistakes) == 1 else ", ".join(mistake_name(m) for m in mistakes[:4])
        more = f" and {len(mistakes) - 4} more" if len(mistakes) > 4 else ""
        notes.append(f"ignored: {shown}{more}")
    if report.get("interrupted"):
        left = plural(report.get("extraction_left", 0), "extraction")
        notes.append(f"INTERRUPTED by {report['interrupted']}, {left} left for the next run")
    if note := converter_note(report):  # what to do about it
        notes.append(note)
    render = report.get("render")
    if isinstance(render, dict):
        if failed := int(render.get("errors", 0)):
            notes.append(f"{plural(failed, 'rendering')} failed (`scrapy cache ls --failed`)")
        if recorded := len(render.get("script_failed_recorded") or {}):
            notes.append(f"{plural(recorded, 'page')} recorded with scripts that failed to load")
        if standing := len(render.get("script_failed_standing") or []):
            notes.append(f"{plural(standing, 'page')} whose scripts failed to load run after run")
    if report.get("links_broken"):
        notes.append(f"{plural(report['links_broken'], 'broken link')}")
    if report.get("pages_empty"):
        notes.append(f"{plural(report['pages_empty'], 'page')} with no text, not sent (`scrapy cache ls --empty`)")
    if report.get("pages_widened"):
        notes.append(f"{plural(report['pages_widened'], 'page')} widened (`scrapy cache ls --widened`)")
    if report.get("pages_named_out"):
        notes.append(
            f"{plural(report.get('words_named_out', 0), 'word')} left out by a name on "
            f"{plural(report['pages_named_out'], 'page')} (`scrapy cache ls --named-out`)"
        )
    revisit = report.get("revisit")
    if isinstance(revisit, dict) and revisit.get("enabled") and revisit.get("skipping", True):
        saved = int(revisit.get("requests_saved", 0))
        note = f"{plural(saved, 'page')} not requested by their revisit schedule"
        if broken := int(revisit.get("broken_links_not_rechecked") or 0):
            note += f", {plural(broken, 'known broken link')} not asked for again"
        if sampled := int(revisit.get("sampled", 0)):
            note += f" ({sampled} checked anyway, miss rate {revisit.get('miss_rate') or 0.0:.1%})"
        if trusted := len(revisit.get("trusted_hosts") or []):
            note += f", lastmod trusted on {plural(trusted, 'host')}"
        for name, hosts in distrusted_validators(revisit.get("signals")).items():
            note += f", {name} not believed on {plural(hosts, 'host')}"
        notes.append(note)
    return notes


def mistake_name(mistake: Any) -> str:
    """
    >>> mistake_name({"kind": "spider argument", "name": "colour"}), mistake_name({"kind": "setting", "name": "X_Y"})
    ('-a colour', 'X_Y')
    """
    if not isinstance(mistake, dict):
        return str(mistake)
    return f"-a {mistake.get('name')}" if mistake.get("kind") == "spider argument" else str(mistake.get("name"))


def mistake_short(mistake: Any) -> str:
    """A run report's ``mistakes`` entry as the summary line names it.

    >>> mistake_short({"kind": "setting", "name": "DOWNLOAD_DELAYY", "meant": "DOWNLOAD_DELAY"})
    'DOWNLOAD_DELAYY (DOWNLOAD_DELAY?)'
    >>> mistake_short({"kind": "spider argument", "name": "colour", "meant": None})
    '-a colour'
    """
    name = mistake_name(mistake)
    return f"{name} ({mistake['meant']}?)" if isinstance(mistake, dict) and mistake.get("meant") else name


def summary_line(report: dict[str, Any], where: str = "") -> str:
    """One human line for the end of the log, at most :data:`SUMMARY_MAX` characters
    before where its report is (``where``): the run, how it ended and how long it took,
    its counts, what was asked and ignored, then notes while they fit (those that do not
    are counted).

    >>> summary_line({"run_id": "r", "pages_new": 1, "pages_changed": 2, "pages_unchanged": 3,
    ...   "pages_removed": 0, "responses_not_modified": 3, "requests": 8, "extractor_calls": 3,
    ...   "extraction_cache_hits": 3, "errors": 0, "finish_reason": "finished",
    ...   "started_at": "2026-11-29T03:00:00Z", "finished_at": "2026-11-29T03:02:05Z"}, "runs/r.json")
    ... # doctest: +NORMALIZE_WHITESPACE
    'run r (finished in 2m05s): 1 new, 2 changed, 3 unchanged, 0 removed; 3 of 8 requests not
    modified (304); 3 extractor calls, 3 reused; 0 errors; report runs/r.json'

    A partial run says why, briefly; a failed one, what failed:

    >>> summary_line({"run_id": "r", "pages_new": 1, "pages_changed": 0, "pages_unchanged": 0,
    ...   "pages_removed": 0, "responses_not_modified": 0, "extractor_calls": 1,
    ...   "extraction_cache_hits": 0, "errors": 2, "finish_reason": "finished", "complete": False,
    ...   "incomplete_reasons": ["failed pages", "renderings failed"], "render": {"errors": 2}})
    ... # doctest: +NORMALIZE_WHITESPACE
    'run r (finished, partial, no page marked removed for not being reached: failed pages;
    renderings failed): 1 new, 0 changed, 0 unchanged, 0 removed; 0 not modified (304); 1
    extractor call, 0 reused; 2 errors; 2 renderings failed (`scrapy cache ls --failed`)'
    >>> summary_line({"run_id": "r", "finish_reason": "finished", "complete": False, "errors": 0,
    ...   "failed": "no page could be crawled: the start page http://a/en/ answered 404 Not Found",
    ...   "mistakes": [{"kind": "setting", "name": "DOWNLOAD_DELAYY", "meant": "DOWNLOAD_DELAY"}]})
    ... # doctest: +NORMALIZE_WHITESPACE
    'run r FAILED (finished): no page could be crawled: the start page http://a/en/ answered 404
    Not Found; 0 errors; ignored: DOWNLOAD_DELAYY (DOWNLOAD_DELAY?)'

    A dry run says what it would have sent:

    >>> summary_line({"run_id": "r", "kind": "process", "pages_processed": 7, "extractor_calls": 0,
    ...   "extraction_cache_hits": 6, "errors": 0, "finish_reason": "finished",
    ...   "dry_run": {"pages": 1, "tokens": None}})  # doctest: +NORMALIZE_WHITESPACE
    'process run r (finished): 7 stored pages processed, nothing fetched; dry run, nothing sent: 1
    page to send, 6 extracted already; 0 errors'
    """
    took = elapsed(report)
    ended = f"{report['finish_reason']} in {took}" if took else str(report["finish_reason"])
    kind = "process run" if report.get("kind") == "process" else "run"
    tail = f"; report {where}" if where else ""
    if report.get("failed"):
        line = f"{kind} {report['run_id']} FAILED ({ended}): {report['failed']}; {plural(report['errors'], 'error')}"
        return with_notes(line, summary_notes(report)) + tail
    if partial := partial_short(report):
        ended += f", {partial}"
    if report.get("kind") == "process":
        pages = f"{plural(report.get('pages_processed', 0), 'stored page')} processed, nothing fetched"
    else:
        pages = (
            f"{report['pages_new']} new, {report['pages_changed']} changed, "
            f"{report['pages_unchanged']} unchanged, {report['pages_removed']} removed; "
            f"{not_modified_note(report)}"
        )
    dry_run = report.get("dry_run")
    if isinstance(dry_run, dict):  # a dry run: nothing sent, no call saved
        calls = (
            f"dry run, nothing sent: {plural(dry_run.get('pages', 0), 'page')} to send, "
            f"{report['extraction_cache_hits']} extracted already"
        )
    else:
        calls = f"{plural(report['extractor_calls'], 'extractor call')}, {report['extraction_cache_hits']} reused"
    line = f"{kind} {report['run_id']} ({ended}): {pages}; {calls}; {plural(report['errors'], 'error')}"
    return with_notes(line, summary_notes(report)) + tail


def partial_short(report: dict[str, Any]) -> str:
    """:func:`partial_note` as the summary line says it: its first two reasons, then how
    many more (``scrapy cache stats`` says them all).

    >>> partial_short({"complete": False, "incomplete_reasons": ["robots.txt failed", "failed pages", "x", "y"]})
    'partial, no page marked removed for not being reached: robots.txt failed; failed pages and 2 more'
    """
    if report.get("complete", True):
        return ""
    more = sum(1 for r in report.get("incomplete_reasons") or [] if not str(r).startswith("finish reason ")) - 2
    if more <= 0:
        return shortened(partial_note(report), 110)
    return shortened(partial_note(report, shown=2), 100) + f" and {more} more"


def with_notes(line: str, notes: list[str]) -> str:
    """``line`` and the ``notes`` that fit in :data:`SUMMARY_MAX` (what was asked and
    ignored always), in order, then how many did not."""
    left_out = 0
    for index, note in enumerate(notes):
        later = len(notes) - index - 1
        room = SUMMARY_MAX - (len("; 9 more in the report") if later or left_out else 0)
        if len(line) + 2 + len(note) > room and not note.startswith("ignored:"):
            left_out += 1  # (a later, shorter note may fit)
            continue
        line += f"; {note}"
    return line + (f"; {left_out} more in the report" if left_out else "")

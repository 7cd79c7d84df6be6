"""Benchmark: what one changed page costs in the store, embedded SQLite against PostgreSQL.

    python -m bench.store_latency                       # 2,000 pages on each store
    python -m bench.store_latency --pages 500 --json bench/results/store_latency.json
    EXTRACTED_DOCS_DSN=postgresql://... python -m bench.store_latency   # a server of yours

Each page goes through the store calls a crawl and its stages make for a changed page,
in their order: the middleware reads the stored response and writes the new one; the
spider reads what the last response parsed into and writes what this one did; the
pipeline reads the record and the content and writes both; the boilerplate stage reads
the content and writes its clean text; the extraction stage reads the record and the
extraction, looks up the input, claims it, writes the extraction and its index, releases
the claim and writes the record; a commit every ``EXTRACTED_DOCS_COMMIT_EVERY`` (200)
page writes, as the crawl's :class:`~crawler.cache.Cache` does. The extractor itself is
not called: the figures are the store's own cost.

Reported per store: microseconds per page, round trips (statements) per page for
PostgreSQL, writes per page (rows written), and the ratio PostgreSQL / SQLite. Without
``EXTRACTED_DOCS_DSN`` in the environment the script starts a throw-away local server
with the tests' helper (tests/pg_server.py: Debian's postgresql, durability off like the
tests'; ``--durable`` keeps fsync and synchronous commits on, as a production server).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from crawler.cache.pgdsn import masked_dsn
from crawler.cache.postgres import PostgresDocStore
from crawler.cache.responses import ParsedPage, StoredResponse
from crawler.cache.sqlite import SqliteDocStore

COMMIT_EVERY = 200
BODY = b"<html><body>" + b"<p>Some documentation text, repeated for a realistic body.</p>" * 200 + b"</body></html>"
TEXT = "# Page\n\n" + "Some documentation text, repeated for a realistic page. " * 100


def record(n: int, status: str) -> dict[str, Any]:
    url = f"https://docs.example.com/section{n % 31}/page-{n}.html"
    return {
        "url": url, "canonical_url": url, "domain": "docs.example.com", "title": f"Page {n}",
        "status": status, "content_hash": f"{n:064x}", "first_seen": "2026-10-01T03:17:00Z",
        "last_seen": "2026-11-21T03:17:00Z", "last_changed": "2026-11-21T03:17:00Z", "run_id": "bench",
        "history": [{"at": "2026-10-01T03:17:00Z", "event": "new", "content_hash": f"{n:064x}"}],
    }  # fmt: skip


def fill(store: Any, pages: int) -> None:
    """The state before the recrawl: every page stored once, unchanged since."""
    for n in range(pages):
        key = f"{n:040x}"
        store.put_response(key, StoredResponse(f"https://x/{n}", 200, {"ETag": f'"{n}"'}, BODY, "t", "t"))
        store.put_parsed(key, ParsedPage(f"{n:064x}", "markdown:2", {"title": f"Page {n}"}, ["https://x/"], "t"))
        store.put_page(key, record(n, "new"))
        store.put_content(
            key, {"url": f"https://x/{n}", "text": TEXT, "fields": {}, "content_hash": "c", "stored_at": "t"}
        )
        if n % COMMIT_EVERY == COMMIT_EVERY - 1:
            store.commit()
    store.commit()


def changed_page(store: Any, n: int) -> int:
    """The calls for one changed page; the number of writes it made."""
    key = f"{n:040x}"
    input_key = f"{n + 1:064x}"
    store.get_response(key)  # RevalidationMiddleware: the validators
    store.put_response(key, StoredResponse(f"https://x/{n}", 200, {"ETag": f'"{n}b"'}, BODY + b"!", "t2", "t2"))
    store.get_parsed(key)  # the spider: reuse what the stored response parsed into?
    store.put_parsed(key, ParsedPage(f"{n + 1:064x}", "markdown:2", {"title": f"Page {n}"}, ["https://x/"], "t2"))
    page = store.get_page(key) or record(n, "new")  # ContentHashPipeline
    content = store.get_content(key) or {}
    content = {**content, "text": TEXT + "changed", "content_hash": "d", "stored_at": "t2"}
    store.put_content(key, content)
    page["status"] = "changed"
    store.put_page(key, page)
    content = store.get_content(key) or content  # BoilerplateStage: the clean text
    store.put_content(key, {**content, "clean": TEXT})
    store.get_page(key)  # ExtractionStage
    store.read_extraction(key)
    store.find_extraction(input_key)
    store.claim_extraction(input_key, "bench", 60.0)
    store.write_extraction(key, {"url": f"https://x/{n}", "url_hash": key, "input_key": input_key, "data": {"n": n}})
    store.link_extraction(input_key, key)
    store.release_extraction(input_key, "bench")
    store.put_page(key, {**page, "extraction": {"input_key": input_key}})
    return 8  # response, parsed, content x2, record x2, extraction, input link


def unchanged_page(store: Any, n: int) -> int:
    """The calls for one page of an unchanged recrawl (a 304 replayed, parsed as
    before, the same content hash): reads only."""
    key = f"{n:040x}"
    store.get_response(key)  # RevalidationMiddleware: the validators, then the 304's replay
    store.get_parsed(key)  # the spider reuses what it parsed into
    store.get_page(key)  # ContentHashPipeline: the same content hash
    store.get_content(key)
    return 0


def run(store: Any, pages: int, page: Any = None) -> tuple[float, int]:
    """Seconds for ``pages`` changed pages (or ``page``'s calls), and their writes."""
    page = page or changed_page
    writes = 0
    since_commit = 0
    started = time.perf_counter()
    for n in range(pages):
        made = page(store, n)
        writes += made
        since_commit += made
        if since_commit >= COMMIT_EVERY:
            store.commit()
            since_commit = 0
    store.commit()
    return time.perf_counter() - started, writes


class StatementCounter:
    """Counts the statements a psycopg connection executes (round trips to the server)."""

    def __init__(self, store: PostgresDocStore) -> None:
        self.count = 0
        self.writes = 0
        conn = store._connection
        cursor_cls = conn.cursor_factory
        counter = self

        class Counting(cursor_cls):  # type: ignore[misc,valid-type]
            def execute(self, query: Any, *args: Any, **kwargs: Any) -> Any:
                counter.count += 1
                counter.writes += _writes(query)
                return super().execute(query, *args, **kwargs)

            def executemany(self, query: Any, params_seq: Any, **kwargs: Any) -> Any:
                params = list(params_seq)
                counter.count += len(params)  # one statement per row (pipelined in one round trip)
                counter.writes += _writes(query) * len(params)
                return super().executemany(query, params, **kwargs)

        conn.cursor_factory = Counting


def backend_cpu(store: PostgresDocStore) -> float | None:
    """CPU seconds the server process of ``store``'s connection has used (its
    ``/proc`` entry: a server on this machine only; ``None`` elsewhere)."""
    pid = store._connection.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[index]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _writes(query: Any) -> int:
    """1 for a statement that writes a row (the claims' too), else 0."""
    return int(str(query).lstrip().split(" ", 1)[0].upper() in ("INSERT", "UPDATE", "DELETE"))


def measure(open_store: Any, pages: int, repeat: int, counter: bool = False, page: Any = None) -> dict[str, Any]:
    times = []
    server_cpu: list[float] = []
    statements = rows = None
    writes = 0
    for _ in range(repeat):
        store = open_store()
        try:
            fill(store, pages)
            counting = StatementCounter(store) if counter else None
            before = backend_cpu(store) if counter else None
            seconds, writes = run(store, pages, page)
            after = backend_cpu(store) if counter else None
            if before is not None and after is not None:
                server_cpu.append(after - before)
            times.append(seconds)
            if counting is not None:
                statements = counting.count / pages
                rows = counting.writes / pages
        finally:
            store.close()
    best = min(times)
    result = {
        "us_per_page": round(best / pages * 1e6, 1),
        "us_per_page_median": round(statistics.median(times) / pages * 1e6, 1),
        "write_calls_per_page": writes / pages,
    }
    if server_cpu:  # the server's own CPU per page (its process for this connection)
        result["server_cpu_us_per_page"] = round(min(server_cpu) / pages * 1e6, 1)
    if statements is not None:
        result["statements_per_page"] = round(statements, 2)
        result["rows_written_per_page"] = round(rows or 0, 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--durable", action="store_true", help="the local server with fsync and synchronous commit")
    parser.add_argument("--json", help="write the figures to this file too")
    opts = parser.parse_args()

    with ExitStack() as stack:
        dsn = os.environ.get("EXTRACTED_DOCS_DSN", "")
        server = "EXTRACTED_DOCS_DSN"
        if not dsn:
            from tests import pg_server

            if opts.durable:
                pg_server.SPEED = "-F -c fsync=on -c synchronous_commit=on -c full_page_writes=on"
            started = stack.enter_context(pg_server.running_postgres())
            server = "a local server (tests/pg_server.py" + (", durable)" if opts.durable else ", fsync off)")
            dsn = started.dsn()
        databases = iter(range(1, 1000))
        made: list[str] = []

        def drop_databases() -> None:  # the server's own databases are left as they were
            import psycopg

            with psycopg.connect(dsn, autocommit=True) as conn:
                for name in made:
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}"')

        stack.callback(drop_databases)

        def open_postgres() -> PostgresDocStore:
            import psycopg

            name = f"bench_store_{os.getpid()}_{next(databases)}"
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
                conn.execute(f'CREATE DATABASE "{name}"')
            made.append(name)
            from psycopg.conninfo import make_conninfo

            return PostgresDocStore(make_conninfo(dsn, dbname=name))

        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-store-")))
        directories = iter(range(1, 1000))

        def open_sqlite() -> SqliteDocStore:
            return SqliteDocStore(tmp / f"cache-{next(directories)}")

        sqlite = measure(open_sqlite, opts.pages, opts.repeat)
        postgres = measure(open_postgres, opts.pages, opts.repeat, counter=True)
        # a page of an unchanged recrawl: reads only
        sqlite_unchanged = measure(open_sqlite, opts.pages, opts.repeat, page=unchanged_page)
        postgres_unchanged = measure(open_postgres, opts.pages, opts.repeat, counter=True, page=unchanged_page)
    figures = {
        "pages": opts.pages,
        "repeat": opts.repeat,
        "postgres_server": server if server != "EXTRACTED_DOCS_DSN" else masked_dsn(dsn),
        "sqlite": sqlite,
        "postgres": postgres,
        "ratio_postgres_to_sqlite": round(postgres["us_per_page"] / sqlite["us_per_page"], 2),
        "unchanged": {
            "sqlite": sqlite_unchanged,
            "postgres": postgres_unchanged,
            "ratio_postgres_to_sqlite": round(postgres_unchanged["us_per_page"] / sqlite_unchanged["us_per_page"], 2),
        },
    }
    print(f"One changed page's store calls, {opts.pages} pages, best of {opts.repeat}:")
    calls = sqlite["write_calls_per_page"]
    print(f"  SqliteDocStore    {sqlite['us_per_page']:8.1f} µs/page   {calls:.0f} write calls/page")
    print(
        f"  PostgresDocStore  {postgres['us_per_page']:8.1f} µs/page   {calls:.0f} write calls/page,"
        f" {postgres['rows_written_per_page']} rows written/page (claims included),"
        f" {postgres['statements_per_page']} statements/page  ({figures['postgres_server']})"
    )
    print(f"  PostgreSQL / SQLite: {figures['ratio_postgres_to_sqlite']}x")
    if "server_cpu_us_per_page" in postgres:
        print(f"  the server's own CPU: {postgres['server_cpu_us_per_page']} µs/page (its process for the connection)")
    unchanged = figures["unchanged"]
    print(
        f"A page of an unchanged recrawl (reads only): SqliteDocStore {sqlite_unchanged['us_per_page']} µs, "
        f"PostgresDocStore {postgres_unchanged['us_per_page']} µs ({unchanged['ratio_postgres_to_sqlite']}x), "
        f"{postgres_unchanged.get('statements_per_page')} statements/page, "
        f"server CPU {postgres_unchanged.get('server_cpu_us_per_page')} µs/page"
    )
    if opts.json:
        Path(opts.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""What the PostgreSQL store writes at once, not buffered until a commit, as the
embedded store writes its files (:class:`PostgresRecords`): extractions and their index
by input, the claims on inputs, domain records and run reports. Another process finds
an extraction as soon as its claim is released."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from crawler.cache.codecs import json_encode
from crawler.cache.pgconnection import PostgresConnection
from crawler.support.secrets import mask_data

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


class PostgresRecords(PostgresConnection):
    """The tables written at once (see the module's docstring), the part of
    :class:`crawler.cache.postgres.PostgresDocStore` that writes them."""

    # -- the claims -------------------------------------------------------------------------

    def claim_extraction(self, key: str, owner: str, seconds: float) -> bool:
        """Claim the extraction of input ``key`` for ``seconds``: True when no other
        owner holds a live claim on it (an expired claim is taken over)."""
        row = self._execute(
            "INSERT INTO claims (input_key, owner, expires_at) VALUES (%s, %s, now() + make_interval(secs => %s)) "
            "ON CONFLICT (input_key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at "
            "WHERE claims.expires_at < now() OR claims.owner = excluded.owner RETURNING owner",
            (key, owner, float(seconds)),
            kind="write",
        ).fetchone()
        return row is not None

    def release_extraction(self, key: str, owner: str) -> None:
        self._execute("DELETE FROM claims WHERE input_key = %s AND owner = %s", (key, owner), kind="write")

    # -- extractions and their index by input ----------------------------------------------

    def read_extraction(self, url_hash: str) -> dict[str, Any] | None:
        row = self._execute("SELECT extraction FROM extractions WHERE url_hash = %s", (url_hash,)).fetchone()
        extraction: dict[str, Any] | None = self._json("extractions", url_hash, row[0] if row else None)
        return extraction

    def write_extraction(self, url_hash: str, extraction: dict[str, Any]) -> str:
        self._writable()
        self._execute(
            "INSERT INTO extractions (url_hash, extraction) VALUES (%s, %s) "
            "ON CONFLICT (url_hash) DO UPDATE SET extraction = excluded.extraction, written_at = now()",
            (url_hash, json_encode(extraction)),
            kind="write",
        )
        return f"extractions/{url_hash} in {self.location}"

    def delete_extraction(self, url_hash: str) -> None:
        self._writable()
        self._execute("DELETE FROM extractions WHERE url_hash = %s", (url_hash,), kind="write")

    def extraction_name(self, url_hash: str) -> str:
        return f"extractions/{url_hash}"

    def set_extraction_aside(self, url_hash: str, suffix: str) -> str:
        """The extraction of ``url_hash`` kept as a row of its own, no page's
        (``{url_hash}{suffix}``, which holds a dot: no page key has one): its name."""
        self._writable()
        self._execute(
            "UPDATE extractions SET url_hash = %s WHERE url_hash = %s", (url_hash + suffix, url_hash), kind="write"
        )
        return f"extractions/{url_hash}{suffix}"

    def iter_extraction_keys(self) -> Iterator[str]:
        return iter(
            [
                row[0]
                for row in self._execute(
                    "SELECT url_hash FROM extractions WHERE strpos(url_hash, '.') = 0 ORDER BY url_hash COLLATE \"C\""
                )
            ]
        )

    def find_extraction(self, input_key: str) -> str | None:
        row = self._execute("SELECT url_hash FROM inputs WHERE input_key = %s", (input_key,)).fetchone()
        return str(row[0]) if row else None

    def link_extraction(self, input_key: str, url_hash: str) -> None:
        """Written at once, as the extraction: another process finds it before extracting."""
        self._writable()
        self._execute(
            "INSERT INTO inputs (input_key, url_hash) VALUES (%s, %s) "
            "ON CONFLICT (input_key) DO UPDATE SET url_hash = excluded.url_hash",
            (input_key, url_hash),
            kind="write",
        )

    def iter_inputs(self) -> Iterator[tuple[str, str]]:
        return iter(self._execute('SELECT input_key, url_hash FROM inputs ORDER BY input_key COLLATE "C"').fetchall())

    def delete_input(self, input_key: str) -> None:
        self._writable()
        self._execute("DELETE FROM inputs WHERE input_key = %s", (input_key,), kind="write")

    # -- domains and runs -----------------------------------------------------------------------

    def get_domain(self, domain: str) -> dict[str, Any] | None:
        row = self._execute("SELECT record FROM domains WHERE domain = %s", (domain,)).fetchone()
        record: dict[str, Any] | None = self._json("boilerplate", domain, row[0] if row else None)
        return record

    def put_domain(self, domain: str, record: dict[str, Any]) -> None:
        self._writable()
        self._execute(
            "INSERT INTO domains (domain, record) VALUES (%s, %s) "
            "ON CONFLICT (domain) DO UPDATE SET record = excluded.record",
            (domain, json_encode(record)),
            kind="write",
        )

    def update_domain(self, domain: str, update: Callable[[dict[str, Any] | None], dict[str, Any]]) -> dict[str, Any]:
        """The record replaced by ``update(record)`` in one transaction that holds the
        domain's row (``SELECT ... FOR UPDATE``; a missing row inserted first, so two
        processes adding the first record wait for each other too): the crawl processes
        of a shared run update it at once without losing one another's update."""
        import psycopg

        self._writable()

        def transaction() -> dict[str, Any]:
            conn = self._connection
            with conn.transaction():
                conn.execute(
                    "INSERT INTO domains (domain, record) VALUES (%s, 'null') ON CONFLICT (domain) DO NOTHING",
                    (domain,),
                )
                row = conn.execute("SELECT record FROM domains WHERE domain = %s FOR UPDATE", (domain,)).fetchone()
                raw = row[0] if row and row[0] != "null" else None
                record = update(self._json("boilerplate", domain, raw))
                conn.execute("UPDATE domains SET record = %s WHERE domain = %s", (json_encode(record), domain))
            return record

        try:
            if self._conn is not None and (self._conn.closed or self._conn.broken):
                self._reconnect()  # lost before: connected again first
            # not asked again on a lost connection: the server may have committed it, and
            # ``update`` adds to what it reads (a second time would count twice)
            return transaction()
        except psycopg.Error as exc:
            raise self._failed("write", exc) from None

    def iter_domains(self) -> Iterator[str]:
        return iter([row[0] for row in self._execute('SELECT domain FROM domains ORDER BY domain COLLATE "C"')])

    def write_run_report(self, run_id: str, report: dict[str, Any]) -> str:
        self._writable()
        self._execute(
            "INSERT INTO runs (run_id, report) VALUES (%s, %s) "
            "ON CONFLICT (run_id) DO UPDATE SET report = excluded.report, seq = DEFAULT, written_at = now()",
            (run_id, json_encode(mask_data(report))),  # errors in it may echo a key the crawl read
            kind="write",
        )
        return self.run_report_location(run_id)

    def run_report_location(self, run_id: str) -> str:
        return f"runs/{run_id} in {self.location}"

    def has_run_report(self, run_id: str) -> bool:
        return bool(run_id) and self._execute("SELECT 1 FROM runs WHERE run_id = %s", (run_id,)).fetchone() is not None

    def run_report(self, run_id: str) -> dict[str, Any] | None:
        """The report of the run ``run_id``, None when it has none."""
        row = self._execute("SELECT report FROM runs WHERE run_id = %s", (run_id,)).fetchone() if run_id else None
        report: dict[str, Any] | None = None if row is None else self._json("runs", run_id, row[0])
        return report

    def run_reports(self, last: int) -> list[dict[str, Any]]:
        """The last ``last`` reports, oldest first (run ids sort by time)."""
        if last <= 0:
            return []
        rows = self._execute(
            'SELECT run_id, report FROM runs ORDER BY run_id COLLATE "C" DESC LIMIT %s', (int(last),)
        ).fetchall()
        reports = (self._json("runs", run_id, raw) for run_id, raw in reversed(rows))
        return [report for report in reports if report is not None]

    def latest_run_report(self) -> dict[str, Any] | None:
        row = self._execute("SELECT run_id, report FROM runs ORDER BY seq DESC LIMIT 1").fetchone()
        report: dict[str, Any] | None = None if row is None else self._json("runs", row[0], row[1])
        return report

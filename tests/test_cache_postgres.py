"""PostgresDocStore beyond the store contract (tests/test_store_contract.py): where its
DSN comes from, what its messages show of it, and what it says of a database that holds
no cache or another version's."""

from __future__ import annotations

import threading
from contextlib import contextmanager

import psycopg
import pytest
from scrapy.settings import Settings

from crawler.cache import Cache, open_store
from crawler.cache.blocktable import SignatureRow
from crawler.cache.errors import CacheCorruptError, CacheMissingError, CacheStorageError
from crawler.cache.lock import CacheLockedError
from crawler.cache.pgdsn import DsnError, masked_dsn
from crawler.cache.pgschema import FORMAT_UPGRADES, FORMAT_VERSION
from crawler.cache.postgres import PostgresDocStore

pytestmark = pytest.mark.postgres  # the store against a real server (some start and restart their own)

STORE = "crawler.cache.postgres.PostgresDocStore"
PASSWORD = "s3cret-Passw0rd-xyz"


def with_password(dsn):
    return dsn.replace("postgres@", f"postgres:{PASSWORD}@")


def test_the_dsn_comes_from_the_environment(postgres_dsn, monkeypatch):
    monkeypatch.setenv("EXTRACTED_DOCS_DSN", with_password(postgres_dsn))
    settings = Settings({"EXTRACTED_DOCS_STORE": STORE})
    cache = Cache.open("unused", STORE, settings=settings)  # a crawl: creates the tables
    try:
        assert PASSWORD not in cache.store.location
        assert cache.store.location == masked_dsn(postgres_dsn)
    finally:
        cache.close()
    store = open_store(settings, readonly=True)
    try:
        assert store.count_pages() == 0
    finally:
        store.close()


def test_a_missing_variable_is_an_error_naming_it(monkeypatch):
    monkeypatch.delenv("EXTRACTED_DOCS_DSN", raising=False)
    with pytest.raises(DsnError, match="EXTRACTED_DOCS_DSN"):
        open_store(Settings({"EXTRACTED_DOCS_STORE": STORE}), readonly=True)


def test_a_server_that_cannot_be_reached_is_said_without_the_password():
    with pytest.raises(CacheStorageError) as raised:
        PostgresDocStore(f"postgresql://crawler:{PASSWORD}@127.0.0.1:1/docs")
    assert "postgresql://crawler@127.0.0.1:1/docs" in str(raised.value)
    assert PASSWORD not in str(raised.value)


def test_a_database_without_the_tables_holds_no_cache(postgres_dsn):
    with pytest.raises(CacheMissingError, match="No cache in postgresql://"):
        PostgresDocStore(postgres_dsn, readonly=True, create=False)
    with pytest.raises(CacheMissingError):
        PostgresDocStore(postgres_dsn, create=False)
    PostgresDocStore(postgres_dsn).close()  # a crawl's open makes them
    PostgresDocStore(postgres_dsn, create=False).close()


def test_a_store_of_another_version_is_refused_and_left_as_it_is(postgres_dsn):
    PostgresDocStore(postgres_dsn).close()
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("UPDATE store_meta SET value = '99' WHERE name = 'format'")
    with pytest.raises(CacheCorruptError, match="another version"):
        PostgresDocStore(postgres_dsn)
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        assert conn.execute("SELECT value FROM store_meta WHERE name = 'format'").fetchone() == ("99",)


def test_a_store_of_the_previous_format_is_upgraded_on_its_first_open(postgres_dsn, caplog):
    """Format 1 had no selection_widened nor named_out column: whoever opens the store
    first (here a command that only reads) adds them, once; its pages are all still there."""
    assert set(FORMAT_UPGRADES) >= set(range(1, FORMAT_VERSION))  # every older format has its way up
    store = PostgresDocStore(postgres_dsn)
    store.put_page("h", {"url": "https://a.com/", "domain": "a.com", "status": "new"})
    store.commit()
    store.close()
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE pages DROP COLUMN selection_widened")
        conn.execute("ALTER TABLE pages DROP COLUMN named_out")
        conn.execute("UPDATE store_meta SET value = '1' WHERE name = 'format'")
    with caplog.at_level("INFO", logger="crawler.cache.postgres"):
        reader = PostgresDocStore(postgres_dsn, readonly=True)
    try:
        assert [key for key, _ in reader.query_pages()] == ["h"] and list(reader.query_pages(widened=True)) == []
    finally:
        reader.close()
    assert f"from format 1 to {FORMAT_VERSION}" in caplog.text
    caplog.clear()
    with caplog.at_level("INFO", logger="crawler.cache.postgres"):
        writer = PostgresDocStore(postgres_dsn)
    try:
        writer.put_page(
            "h", {"url": "https://a.com/", "domain": "a.com", "status": "new", "selection_widened": "t", "named_out": 3}
        )
        writer.commit()
        assert [key for key, _ in writer.query_pages(widened=True)] == ["h"]
        assert [key for key, _ in writer.query_pages(named_out=True)] == ["h"]
    finally:
        writer.close()
    assert "Upgraded" not in caplog.text  # once
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        assert conn.execute("SELECT value FROM store_meta WHERE name = 'format'").fetchone() == (str(FORMAT_VERSION),)


def test_a_store_of_format_3_has_its_reports_change_lists_moved_into_the_table(postgres_dsn, caplog):
    """Format 3 kept each run's change list inline in its report: the upgrade copies
    every report's list into the changes table, in order, once; the reports stay."""
    old_changes = [
        {"url": f"https://a.com/{n}", "url_hash": f"h{n}", "status": "changed", "content_hash": f"c{n}",
         "extraction_file": f"extractions/h{n}"}
        for n in range(3)
    ]  # fmt: skip
    store = PostgresDocStore(postgres_dsn)
    store.write_run_report("r-old", {"run_id": "r-old", "changes": old_changes})
    store.write_run_report("r-older", {"run_id": "r-older"})  # no change list at all
    store.close()
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE changes")
        conn.execute("UPDATE store_meta SET value = '3' WHERE name = 'format'")
    with caplog.at_level("INFO", logger="crawler.cache.postgres"):
        reader = PostgresDocStore(postgres_dsn, readonly=True)
    try:
        assert list(reader.iter_run_changes("r-old")) == old_changes
        assert reader.count_run_changes("r-old") == {"changed": 3} and reader.count_run_changes("r-older") == {}
        assert reader.run_report("r-old")["changes"] == old_changes  # nothing lost
    finally:
        reader.close()
    assert f"from format 3 to {FORMAT_VERSION}" in caplog.text
    PostgresDocStore(postgres_dsn).close()  # once
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM changes").fetchone() == (3,)


def test_a_store_of_format_4_gets_the_boilerplate_tables_empty_and_keeps_everything(postgres_dsn, caplog):
    """Format 4 kept no page signatures nor domain statistics: the upgrade makes their
    tables, empty; nothing stored is touched."""
    store = PostgresDocStore(postgres_dsn)
    store.put_page("h", {"url": "https://a.com/", "domain": "a.com", "status": "new"})
    store.put_content("h", {"url": "https://a.com/", "text": "A", "clean": "A"})
    store.put_domain("a.com", {"version": 2, "pages_analysed": 1})
    store.commit()
    store.close()
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE block_signatures")
        conn.execute("DROP TABLE block_stats")
        conn.execute("UPDATE store_meta SET value = '4' WHERE name = 'format'")
    with caplog.at_level("INFO", logger="crawler.cache.postgres"):
        writer = PostgresDocStore(postgres_dsn)
    try:
        assert f"from format 4 to {FORMAT_VERSION}" in caplog.text and FORMAT_VERSION == 6
        assert writer.get_content("h")["clean"] == "A" and writer.get_domain("a.com")["pages_analysed"] == 1
        assert list(writer.iter_signature_marks("a.com")) == [] and writer.get_block_stats("a.com") is None
        writer.put_signatures("a.com", [SignatureRow("h", "m", 1, 0, "i", b"sig")])
        writer.put_block_stats("a.com", b"stats")
        assert writer.get_signatures(["h"]) == {"h": b"sig"} and writer.get_block_stats("a.com") == b"stats"
    finally:
        writer.close()


def test_two_crawls_share_the_updating_firstnd_a_maintenance_lock_waits_for_both(postgres_dsn, monkeypatch):
    monkeypatch.setenv("EXTRACTED_DOCS_DSN", postgres_dsn)
    settings = Settings({"EXTRACTED_DOCS_STORE": STORE})
    first = Cache.open("unused", STORE, settings=settings)
    second = Cache.open("unused", STORE, settings=settings)  # another crawler of the run
    maintenance = open_store(settings, readonly=False)
    try:
        with pytest.raises(CacheLockedError), maintenance.lock():
            pass
        first.close()
        second.close()
        with maintenance.lock(), pytest.raises(CacheLockedError):
            Cache.open("unused", STORE, settings=settings)
    finally:
        first.close()
        second.close()
        maintenance.close()


def test_a_domain_update_waits_for_another_process_and_loses_nothing(postgres_dsn):
    """Two crawl processes of a shared run adding their observations to one domain
    record at once: the second waits (its row lock) while the first holds the record,
    then adds to what the first stored. Without the lock the second reads the record
    before the first stores it, and one update is lost."""
    first, second = PostgresDocStore(postgres_dsn), PostgresDocStore(postgres_dsn)
    watcher = psycopg.connect(postgres_dsn, autocommit=True)
    first_read, first_may_write = threading.Event(), threading.Event()

    def add(name, *, hold=False):
        def update(record):
            if hold:
                first_read.set()
                first_may_write.wait()
            return {**(record or {}), name: 1}

        return update

    def second_waits_or_is_done():
        waiting = watcher.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()
        return waiting[0] > 0 or not updating_second.is_alive()

    try:
        updating_first = threading.Thread(target=first.update_domain, args=("a.com", add("first", hold=True)))
        updating_second = threading.Thread(target=second.update_domain, args=("a.com", add("second")))
        updating_first.start()
        first_read.wait()  # the first holds the record it read
        updating_second.start()
        for _ in range(3000):  # (a bound against a hang, not a measure)
            if second_waits_or_is_done():
                break
            threading.Event().wait(0.01)
        first_may_write.set()
        updating_first.join()
        updating_second.join()
        assert first.get_domain("a.com") == {"first": 1, "second": 1}
    finally:
        first_may_write.set()
        watcher.close()
        first.close()
        second.close()


def test_many_processes_adding_to_one_domain_record_at_once_lose_nothing(postgres_dsn):
    stores = [PostgresDocStore(postgres_dsn) for _ in range(6)]
    start = threading.Barrier(len(stores))

    def observe(index, store):
        start.wait()
        store.update_domain("a.com", lambda record: {**(record or {}), f"process {index}": 1})

    threads = [threading.Thread(target=observe, args=(i, store)) for i, store in enumerate(stores)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert stores[0].get_domain("a.com") == {f"process {i}": 1 for i in range(len(stores))}
    finally:
        for store in stores:
            store.close()


@contextmanager
def restarted_under_a_store(name):
    """A store of a server of its own, holding its writer lock, page ``a`` written; then
    the server crashes and starts again under it: ``(dsn, store)``."""
    from tests.pg_server import create_database, running_postgres, start_again, stop_server

    with running_postgres() as server:
        dsn = create_database(server, name)
        store = PostgresDocStore(dsn)
        try:
            with store.writer_lock():
                store.put_page("a", {"url": "https://a.com/a", "domain": "a.com", "status": "new"})
                store.commit()
                with psycopg.connect(dsn, autocommit=True) as admin:
                    admin.execute("CHECKPOINT")  # (the test server commits asynchronously: on disk before the crash)
                stop_server(server)
                start_again(server)
                yield dsn, store
        finally:
            store.close()


def test_a_server_restart_is_survived_the_statement_asked_again_on_a_new_connection(caplog):
    """The server restarts under an open store (a crash, a failover): the statement that
    met the lost connection is asked again on a new one, with the writer lock taken
    again; nothing fails, nothing pending is lost."""
    with restarted_under_a_store("lost") as (dsn, store):
        store.put_page("b", {"url": "https://a.com/b", "domain": "a.com", "status": "new"})
        store.commit()  # met the lost connection, connected again, written
        assert store.get_page("a")["status"] == "new" and store.get_page("b")["status"] == "new"
        assert "Connected again to the cache database" in caplog.text
        other = PostgresDocStore(dsn)
        try:  # the writer lock is held again: a maintenance command is refused
            assert other.is_locked_elsewhere()
            with pytest.raises(CacheLockedError), other.lock():
                pass
        finally:
            other.close()


def test_a_maintenance_lock_taken_while_the_connection_was_lost_fences_the_process_off():
    with restarted_under_a_store("fenced") as (dsn, store):
        maintenance = PostgresDocStore(dsn)
        try:
            with maintenance.lock():  # taken while the crawl's session was gone
                store.put_page("b", {"url": "https://a.com/b", "domain": "a.com", "status": "new"})
                with pytest.raises(CacheStorageError, match="its lock is held by another session now"):
                    store.commit()
            with pytest.raises(CacheStorageError, match="reads and writes nothing more"):
                store.commit()  # fenced off for good, even once the command is done
            assert maintenance.get_page("b") is None
        finally:
            maintenance.close()


def test_a_maintenance_command_that_ran_and_ended_while_the_connection_was_lost_fences_the_process_off():
    """The command took the exclusive lock while the crawl's session was gone, did its
    work and released it before the crawl's next statement: the crawl, connecting again,
    finds that one ran (the store counts them) and writes nothing of what it held."""
    with restarted_under_a_store("ended") as (dsn, store):
        maintenance = PostgresDocStore(dsn)
        try:
            with maintenance.lock():
                pass  # (a prune, a verify: done before the crawl's next statement)
        finally:
            maintenance.close()
        store.put_page("b", {"url": "https://a.com/b", "domain": "a.com", "status": "new"})
        with pytest.raises(CacheStorageError, match="a maintenance command ran on it meanwhile"):
            store.commit()
        reader = PostgresDocStore(dsn)
        try:
            assert reader.get_page("b") is None
        finally:
            reader.close()

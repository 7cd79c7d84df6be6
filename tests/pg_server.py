"""A real PostgreSQL server for the tests (and the store benchmark): Debian's
``postgresql`` package (``make servers`` installs it), ``initdb`` + ``pg_ctl`` in a
temporary directory, on a free loopback port, stopped at the end.

As root the server runs as the ``postgres`` user (PostgreSQL refuses root), through
``runuser -u postgres --``. Durability is off (``fsync``, ``synchronous_commit``,
``full_page_writes``): a test server that crashes is thrown away.

* ``postgres_server``: the session's server (one per xdist worker), a :class:`PostgresServer`;
* ``postgres_dsn``: a fresh, empty database for one test (``CREATE DATABASE``), its DSN.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

#: how long the server may take to accept connections (a loaded machine is slow, never wrong)
START_TIMEOUT = 120.0
SPEED = "-F -c fsync=off -c synchronous_commit=off -c full_page_writes=off"


class PostgresUnavailable(RuntimeError):
    """The server could not be started; the message says why and what to install."""


def postgres_bin() -> Path:
    """The newest Debian ``postgresql`` binaries (``/usr/lib/postgresql/<version>/bin``)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3].split(".")[0]))
    if not found:
        raise PostgresUnavailable(
            "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): run `make servers`, "
            "or as root `apt-get install --no-install-recommends postgresql`"
        )
    return Path(found[-1]).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PostgresServer:
    host: str
    port: int
    user: str
    directory: Path

    def dsn(self, dbname: str = "postgres") -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{dbname}"

    @property
    def admin_dsn(self) -> str:
        return self.dsn("postgres")


def _as_server_user(command: list[str]) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *command]
    return command


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(_as_server_user(command), capture_output=True, text=True, timeout=START_TIMEOUT)
    if done.returncode != 0:
        raise PostgresUnavailable(f"{what} failed (status {done.returncode}): {done.stderr.strip() or done.stdout}")


def _log_tail(directory: Path) -> str:
    try:
        return (directory / "server.log").read_text(errors="replace")[-2000:]
    except OSError:
        return ""


@contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    """A server in a new temporary directory, stopped (``pg_ctl stop -m immediate``)
    and its directory removed when the block ends, whatever happened in it."""
    bindir = postgres_bin()
    directory = Path(tempfile.mkdtemp(prefix="pg-test-"))
    data = directory / "data"
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
    started = False
    try:
        _run([str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
              "--no-instructions", "-N"], "initdb")  # fmt: skip
        for attempt in itertools.count(1):
            port = free_port()  # another worker may take it meanwhile: then another port
            options = f"{SPEED} -c listen_addresses=127.0.0.1 -p {port} -k {directory}"
            command = [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(directory / "server.log"),
                       "-o", options, "-w", "-t", str(int(START_TIMEOUT)), "start"]  # fmt: skip
            done = subprocess.run(_as_server_user(command), capture_output=True, text=True, timeout=START_TIMEOUT + 30)
            started = True  # stopped at the end whatever pg_ctl said
            if done.returncode == 0:
                break
            if attempt >= 3 or "could not bind" not in _log_tail(directory):
                raise PostgresUnavailable(
                    f"pg_ctl start failed (status {done.returncode}): {done.stderr.strip()}\n{_log_tail(directory)}"
                )
            _stop(bindir, data)
        server = PostgresServer("127.0.0.1", port, "postgres", directory)
        _wait_ready(bindir, server)
        yield server
    finally:
        if started:
            _stop(bindir, data)
        shutil.rmtree(directory, ignore_errors=True)


def _stop(bindir: Path, data: Path) -> None:
    subprocess.run(
        _as_server_user([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]),
        capture_output=True,
        timeout=START_TIMEOUT,
    )


def stop_server(server: PostgresServer) -> None:
    """Stop ``server`` at once (``-m immediate``, as a crash): a test's own server, from
    :func:`running_postgres`; :func:`start_again` brings it back on its port."""
    _stop(postgres_bin(), server.directory / "data")


def start_again(server: PostgresServer) -> None:
    """Start a server :func:`stop_server` stopped, on the same port; wait until it answers."""
    bindir = postgres_bin()
    options = f"{SPEED} -c listen_addresses=127.0.0.1 -p {server.port} -k {server.directory}"
    command = [str(bindir / "pg_ctl"), "-D", str(server.directory / "data"), "-l", str(server.directory / "server.log"),
               "-o", options, "-w", "-t", str(int(START_TIMEOUT)), "start"]  # fmt: skip
    for attempt in itertools.count(1):
        done = subprocess.run(_as_server_user(command), capture_output=True, text=True, timeout=START_TIMEOUT + 30)
        if done.returncode == 0:
            break
        # its port taken meanwhile (another worker's client socket): such a socket is
        # short-lived; the store under test names this port, so it must be this one
        if attempt >= 10 or "could not bind" not in _log_tail(server.directory):
            raise PostgresUnavailable(
                f"pg_ctl start failed (status {done.returncode}): {done.stderr.strip()}\n{_log_tail(server.directory)}"
            )
        time.sleep(1)
    _wait_ready(bindir, server)


def _wait_ready(bindir: Path, server: PostgresServer) -> None:
    """``pg_isready`` until the server accepts connections (``pg_ctl -w`` already
    waited; this is the check that it answers on the port)."""
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        done = subprocess.run(
            [str(bindir / "pg_isready"), "-h", server.host, "-p", str(server.port), "-U", server.user],
            capture_output=True,
            text=True,
        )
        if done.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise PostgresUnavailable(f"PostgreSQL on port {server.port} never got ready: {done.stdout.strip()}")
        time.sleep(0.1)


def create_database(server: PostgresServer, name: str) -> str:
    """A new, empty database on ``server``: its DSN."""
    import psycopg

    with psycopg.connect(server.admin_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return server.dsn(name)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The session's PostgreSQL server (one per xdist worker). Never skipped: a server
    that cannot start fails the tests that need it, with the reason."""
    with running_postgres() as server:
        yield server


_databases = itertools.count(1)


@pytest.fixture
def postgres_dsn(postgres_server: PostgresServer) -> str:
    """A fresh, empty database of its own for one test: its DSN."""
    return create_database(postgres_server, f"test_{os.getpid()}_{next(_databases)}")

"""A real Redis server for the tests: Debian's ``redis-server`` on a free loopback port.

``redis_server`` (session scope) starts one server for the test session (each xdist
worker has its own), with no persistence, in a temporary directory, waits until it
answers PING and stops it at the end, also when a test failed. ``redis_url`` is the same
server emptied (``FLUSHDB``) for the test that asks for it, so tests are independent
(under xdist each worker process has a server of its own). ``own_redis`` is a server of
one test, which the test may stop (Redis lost mid-crawl).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

REDIS_SERVER = "/usr/bin/redis-server"
START_TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """``redis-server`` on a free loopback port in ``directory``: :meth:`start` waits until
    it answers PING, :meth:`stop` ends it (a test may stop it mid-crawl)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        if not Path(REDIS_SERVER).exists():
            pytest.fail(f"{REDIS_SERVER} is missing: apt-get install redis-server (make test installs it)")
        with open(Path(self.directory, "redis.log"), "a") as log:
            for _attempt in range(5):  # a free port taken by another process meanwhile: another
                self.port = free_port()
                command = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
                command += ["--appendonly", "no", "--dir", self.directory, "--daemonize", "no"]
                command += ["--protected-mode", "yes"]
                self.proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=self.directory)
                deadline = time.monotonic() + START_TIMEOUT
                while not ping(self.port) and self.proc.poll() is None:
                    if time.monotonic() > deadline:
                        self.stop()
                        pytest.fail(f"redis-server did not answer PING in {START_TIMEOUT} s")
                    time.sleep(0.05)
                if self.proc.poll() is None:
                    return self
        pytest.fail(f"redis-server exited: {Path(self.directory, 'redis.log').read_text()}")

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL) and wait until it is gone."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[str]:
    """The URL of a Redis server of this test session (``redis://127.0.0.1:PORT/0``)."""
    directory = tempfile.mkdtemp(prefix="redis-test-")
    server = RedisServer(directory)
    try:
        yield server.start().url
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis server of this test alone, which the test may :meth:`~RedisServer.stop`."""
    server = RedisServer(str(tmp_path))
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server: str) -> str:
    """The session's Redis server, emptied (``FLUSHDB``) for this test."""
    import redis

    client = redis.Redis.from_url(redis_server)
    client.flushdb()
    client.close()
    return redis_server

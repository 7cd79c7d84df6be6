"""A real Redis server for the tests: Debian's ``redis-server`` on a free loopback port.

``redis_server`` (session scope) starts one server for the test session (each xdist
worker has its own), with no persistence, in a temporary directory, waits until it
answers PING and stops it at the end, also when a test failed. ``redis_url`` is the same
server emptied (``FLUSHDB``) for the test that asks for it, so tests are independent
(under xdist each worker process has a server of its own).
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


@pytest.fixture(scope="session")
def redis_server() -> Iterator[str]:
    """The URL of a Redis server of this test session (``redis://127.0.0.1:PORT/0``)."""
    if not Path(REDIS_SERVER).exists():
        pytest.fail(f"{REDIS_SERVER} is missing: apt-get install redis-server (make test installs it)")
    directory = tempfile.mkdtemp(prefix="redis-test-")
    log = open(Path(directory, "redis.log"), "w")  # noqa: SIM115 - closed below
    proc: subprocess.Popen[bytes] | None = None
    try:
        for _attempt in range(5):  # a free port taken by another process meanwhile: another
            port = free_port()
            command = [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
            command += ["--dir", directory, "--daemonize", "no", "--protected-mode", "yes"]
            proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=directory)
            deadline = time.monotonic() + START_TIMEOUT
            while not ping(port) and proc.poll() is None:
                if time.monotonic() > deadline:
                    pytest.fail(f"redis-server did not answer PING in {START_TIMEOUT} s")
                time.sleep(0.05)
            if proc.poll() is None:
                break
        else:
            pytest.fail(f"redis-server exited ({proc.returncode}): {Path(directory, 'redis.log').read_text()}")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def redis_url(redis_server: str) -> str:
    """The session's Redis server, emptied (``FLUSHDB``) for this test."""
    import redis

    client = redis.Redis.from_url(redis_server)
    client.flushdb()
    client.close()
    return redis_server

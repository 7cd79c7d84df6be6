"""Small helpers shared by the tests."""

import asyncio
import os
import sys
import threading
from http.server import ThreadingHTTPServer


def run(coro):
    """Run one of a component's ``async def`` methods to completion."""
    return asyncio.run(coro)


def next_run(cache):
    """End the cache's current run as a finished run does (its report written) and
    start another, as a later crawl would."""
    from crawler.cache import RunState

    cache.store.write_run_report(cache.run.run_id, {"run_id": cache.run.run_id})
    cache.run = RunState()


class QuietServer(ThreadingHTTPServer):
    """A client that hangs up (a crawl killed mid-request) is no error of the server's."""

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def serve(handler):
    """A test HTTP server on 127.0.0.1 (a free port), answering with ``handler`` in
    threads of its own; :func:`stop_serving` ends it."""
    server = QuietServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def stop_serving(server):
    if server is not None:
        server.shutdown()
        server.server_close()


def garble_middle(path, page_size=4096):
    """Overwrite most of the database page in the middle of ``path`` with noise, the
    header left intact: the file still opens, reading that page fails. Returns the
    bytes written, to check the file is left as it is."""
    import os

    data = bytearray(path.read_bytes())
    middle = (len(data) // page_size // 2) * page_size
    assert middle > 0, "a database of one page has no middle"
    noise = bytes((n * 7 + 13) % 256 for n in range(page_size - 200))
    data[middle + 100 : middle + page_size - 100] = noise
    with open(path, "r+b") as handle:
        handle.write(data)
    os.sync()
    return bytes(data)


def drop_overrides(command):
    """``command`` run without the capabilities that let root ignore file permissions
    (as any other user runs it: a read-only file is read-only); unchanged for another user."""
    import os

    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command] if os.geteuid() == 0 else command


def export_tree(directory):
    """Every file of a markdown export (its lock aside): path -> bytes."""
    return {
        path.relative_to(directory).as_posix(): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and path.name != ".lock"
    }


def export_stamps(directory):
    """Each export file's inode and modification time: what a rewrite changes."""
    return {
        path: (os.stat(directory / path).st_ino, os.stat(directory / path).st_mtime_ns)
        for path in export_tree(directory)
    }

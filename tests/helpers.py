"""Small helpers shared by the tests."""

import asyncio
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


def serve(handler):
    """A test HTTP server on 127.0.0.1 (a free port), answering with ``handler`` in
    threads of its own; :func:`stop_serving` ends it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def stop_serving(server):
    if server is not None:
        server.shutdown()
        server.server_close()

"""Rendering: requests sent to the site and peak memory, rendered crawl against plain crawl.

    python -m bench.render_requests --pages 100 [--before /path/to/old/worktree]

A generated site of ``--pages`` pages served on 127.0.0.1 (in this process): each page's
article is written by the site's main script (the server's HTML holds a placeholder, as
a Docusaurus or Next.js bundle does), and each page loads what such a site's pages load:
a runtime and a main script, 8 of 24 shared chunk scripts, 2 stylesheets, a web font and
an image (the last two skipped by the default ``PLAYWRIGHT_ABORT_REQUEST``). The server
counts the requests per path. The same site is crawled (``scrapy crawl docs``, a fresh
cache each time, project defaults but ``DOWNLOAD_DELAY=0``):

* plain: no browser;
* rendered: ``PLAYWRIGHT_ENABLED=True``, by this checkout;
* rendered by ``--before`` (another checkout of the project, e.g. a ``git worktree`` of an
  older commit), when given.

For each: the requests the site got (and their ratio to the plain crawl's), how often the
main script was sent, the pages whose text the script wrote, and the peak memory of the
crawl's process tree (the crawl and its children: Playwright's driver and Chromium's
processes), sampled every 0.2 s from /proc: the sum of their RSS (shared pages counted
in each process) and of their PSS (shared pages divided among them).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench.site import QuietHandler
from crawler.cache.sqlite import SqliteDocStore

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = {"LOG_LEVEL": "INFO", "DOWNLOAD_DELAY": "0", "PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT": "30000"}
CHUNKS = 24
CHUNKS_PER_PAGE = 8
HYDRATE = 'document.querySelectorAll("[data-text]").forEach(e => { e.innerHTML = "<p>" + e.dataset.text + "</p>"; });\n'
#: a bundle's bulk: code that defines functions nobody calls
FILLER = "".join(f"function f{i}(a, b) {{ return a * {i} + b; }}\n" for i in range(4000))


def page_path(n: int) -> str:
    return "/" if n == 0 else f"/docs/page-{n}/"


def page_html(n: int, pages: int) -> bytes:
    chunks = [(n * 5 + k * 3) % CHUNKS for k in range(CHUNKS_PER_PAGE)]
    scripts = [
        "/assets/js/runtime.js",
        "/assets/js/main.js",
        *(f"/assets/js/chunk-{c}.js" for c in sorted(set(chunks))),
    ]
    links = [page_path(m) for m in (n + 1, n + 2, 2 * n + 1) if 0 < m < pages]
    scripts_html = "".join(f'<script src="{s}" defer></script>' for s in scripts)
    links_html = "".join(f'<p><a href="{link}">{link}</a></p>' for link in links)
    return (
        f"<!DOCTYPE html><html><head><title>Page {n}</title>"
        '<link rel="stylesheet" href="/assets/css/styles.css"><link rel="stylesheet" href="/assets/css/theme.css">'
        f'{scripts_html}</head><body><nav><a href="/">Home</a></nav><main><h1>Page {n}</h1>'
        f'<div data-text="Article {n}, written by the main script."><p>Loading...</p></div>'
        f'<img src="/img/logo.png" alt="">{links_html}</main></body></html>'
    ).encode()


def assets() -> dict[str, tuple[str, bytes]]:
    files = {
        "/assets/js/runtime.js": ("application/javascript", FILLER[:20000].encode()),
        "/assets/js/main.js": ("application/javascript", (FILLER + HYDRATE).encode()),
        "/assets/css/styles.css": ("text/css", b"body { margin: 0 auto; max-width: 60em; }\n" * 2000),
        "/assets/css/theme.css": (
            "text/css",
            b"@font-face { font-family: Site; src: url(/fonts/site.woff2); } body { font-family: Site; }\n",
        ),
        "/fonts/site.woff2": ("font/woff2", b"\0" * 30000),
        "/img/logo.png": ("image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 5000),
    }
    for c in range(CHUNKS):
        files[f"/assets/js/chunk-{c}.js"] = ("application/javascript", FILLER[: 30000 + c * 100].encode())
    return files


class CountingSite:
    """The generated site on a free port of 127.0.0.1; ``counts`` is path -> requests."""

    def __init__(self, pages: int) -> None:
        self.pages = pages
        self.files = assets()
        self.counts: Counter[str] = Counter()
        self.lock = threading.Lock()
        site = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                with site.lock:
                    site.counts[path] += 1
                status, content_type, body = site.respond(path)
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                if path in site.files:
                    self.send_header("Cache-Control", "public, max-age=3600")
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def respond(self, path: str) -> tuple[int, str, bytes]:
        if path in self.files:
            return 200, *self.files[path]
        if path == "/robots.txt":
            return 200, "text/plain", b"User-agent: *\nAllow: /\n"
        match = re.fullmatch(r"/docs/page-(\d+)/", path)
        n = 0 if path == "/" else int(match.group(1)) if match else -1
        if 0 <= n < self.pages:
            return 200, "text/html; charset=utf-8", page_html(n, self.pages)
        return 404, "text/html", b"<h1>Not found</h1>"

    def take_counts(self) -> Counter[str]:
        with self.lock:
            counts, self.counts = self.counts, Counter()
        return counts

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                ppid = int(handle.read().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def memory_kb(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process in KiB; zeros when it is gone."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


def kind(pid: int) -> str:
    """What a process of the tree is: the crawl, Playwright's driver, or which of
    Chromium's processes (its ``--type``, the browser itself without one)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            args = handle.read().decode(errors="replace").split("\0")
    except OSError:
        return "gone"
    if any(arg.endswith("run-driver") for arg in args):
        return "driver"
    if "scrapy" in args:
        return "crawl"
    # Chromium rewrites its children's command lines into one string
    words = " ".join(args).split()
    chromium_type = next((word.partition("=")[2] for word in words if word.startswith("--type=")), "browser")
    return f"chromium {chromium_type}"


class PeakMemory:
    """Samples a process tree's summed RSS and PSS every ``interval`` seconds; at the
    peak of PSS, the processes by kind (count, PSS MB)."""

    def __init__(self, pid: int, interval: float = 0.2) -> None:
        self.pid = pid
        self.interval = interval
        self.rss_kb = self.pss_kb = self.processes = 0
        self.at_peak: dict[str, list[float]] = {}
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()

    def sample(self) -> None:
        while not self.stopped.wait(self.interval):
            pids = tree(self.pid)
            sizes = [memory_kb(pid) for pid in pids]
            self.rss_kb = max(self.rss_kb, sum(rss for rss, _ in sizes))
            self.processes = max(self.processes, len(pids))
            pss = sum(pss for _, pss in sizes)
            if pss > self.pss_kb:
                self.pss_kb = pss
                kinds: dict[str, list[float]] = {}
                for pid, (_, process_pss) in zip(pids, sizes, strict=True):
                    row = kinds.setdefault(kind(pid), [0, 0.0])
                    row[0] += 1
                    row[1] = round(row[1] + process_pss / 1024, 1)
                self.at_peak = kinds

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join()


def crawl(site: CountingSite, root: Path, work: Path, rendered: bool, concurrency: int) -> dict[str, Any]:
    """One crawl of ``site`` by the checkout at ``root``: what the site got, the peak memory."""
    cache = work / "cache"
    settings = {
        **SETTINGS,
        "EXTRACTED_DOCS_DIR": str(cache),
        "CONCURRENT_REQUESTS_PER_DOMAIN": str(concurrency),
    }
    if rendered:
        settings["PLAYWRIGHT_ENABLED"] = "True"
    command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"start_urls={site.url}/"]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    site.take_counts()
    log = work / "crawl.log"
    started = time.perf_counter()
    with open(log, "w") as handle:
        proc = subprocess.Popen(command, cwd=root, env=env, stdout=handle, stderr=subprocess.STDOUT)
        memory = PeakMemory(proc.pid)
        try:
            code = proc.wait(timeout=1800)
        finally:
            memory.stop()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    wall = time.perf_counter() - started
    text = log.read_text(errors="replace")
    if code != 0:
        raise SystemExit(f"crawl by {root} exited {code}:\n{text[-3000:]}")
    counts = site.take_counts()
    report = json.loads((cache / "runs" / "latest.json").read_text())
    store = SqliteDocStore(cache, readonly=True)
    try:
        texts = [(store.get_content(key) or {}).get("text", "") for key in store.iter_content_keys()]
    finally:
        store.close()
    written = sum(1 for text in texts if "written by the main script" in text)
    return {
        "requests": sum(counts.values()),
        "page_requests": sum(n for path, n in counts.items() if not path.startswith(("/assets/", "/fonts/", "/img/"))),
        "main_js_requests": counts["/assets/js/main.js"],
        "asset_requests": sum(n for path, n in counts.items() if path.startswith(("/assets/", "/fonts/", "/img/"))),
        "distinct_assets": sum(1 for path in counts if path.startswith(("/assets/", "/fonts/", "/img/"))),
        "pages": report.get("pages_new", 0) + report.get("pages_changed", 0) + report.get("pages_unchanged", 0),
        "pages_hydrated": written,
        "peak_rss_mb": round(memory.rss_kb / 1024, 1),
        "peak_pss_mb": round(memory.pss_kb / 1024, 1),
        "processes": memory.processes,
        "at_peak_pss": dict(sorted(memory.at_peak.items())),
        "wall_s": round(wall, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--before", type=Path, help="another checkout of the project to measure too")
    parser.add_argument("--concurrency", type=int, default=4, help="CONCURRENT_REQUESTS_PER_DOMAIN (default 4)")
    parser.add_argument("--json", type=Path, help="write the results there")
    args = parser.parse_args()
    site = CountingSite(args.pages)
    runs: dict[str, dict[str, Any]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            crawls = [("plain", ROOT, False), ("rendered", ROOT, True)]
            if args.before:
                crawls.insert(1, ("rendered_before", args.before.resolve(), True))
            for name, root, rendered in crawls:
                work = Path(tmp) / name
                work.mkdir()
                runs[name] = crawl(site, root, work, rendered, args.concurrency)
    finally:
        site.stop()
    plain = runs["plain"]["requests"]
    for result in runs.values():
        result["ratio_to_plain"] = round(result["requests"] / max(plain, 1), 2)
    print(f"{args.pages} pages, CONCURRENT_REQUESTS_PER_DOMAIN={args.concurrency}")
    columns = ("requests", "x plain", "main.js", "hydrated", "RSS MB", "PSS MB", "s")
    print(f"{'crawl':<16} " + " ".join(f"{column:>8}" for column in columns))
    for name, r in runs.items():
        print(
            f"{name:<16} {r['requests']:>8} {r['ratio_to_plain']:>8} {r['main_js_requests']:>8} "
            f"{r['pages_hydrated']:>8} {r['peak_rss_mb']:>8} {r['peak_pss_mb']:>8} {r['wall_s']:>6}"
        )
    print("at the peak of PSS, processes by kind: count, PSS MB")
    for name, r in runs.items():
        print(f"{name:<16} " + ", ".join(f"{k} {n} {mb}" for k, (n, mb) in r["at_peak_pss"].items()))
    if args.json:
        args.json.write_text(json.dumps({"pages": args.pages, "concurrency": args.concurrency, "runs": runs}, indent=2))


if __name__ == "__main__":
    main()

"""Benchmark: pages per second with 1, 2 and 3 crawl processes sharing one frontier.

    python -m bench.frontier                      # 3,000 pages, best of 3
    python -m bench.frontier --pages 500 --repeat 1   # smoke run

The generated site of ``bench/site.py`` (quiet: stable validators, no noise) is served
by its own process on 127.0.0.1; a Redis server (Debian's ``redis-server``, no
persistence) by another. For N = 1, 2, 3, N ``scrapy crawl docs`` processes of one run
(``FRONTIER_ENABLED``, a new ``FRONTIER_RUN`` each time, each its own new cache) crawl
the whole site; and, for reference, one process without the frontier. Measured: pages
recorded (the sum of the processes' ``item_scraped_count``: each page once), the crawl's
window (the longest ``elapsed_time_seconds``: from a process's spider opening to its
close, without Python's start-up and the closing stages), pages per second over that
window and as a ratio to one frontier process, and the wall time of the whole run
(start-up and closing stages included). Each configuration runs ``--repeat`` times,
taking turns; the best rate is kept.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.crawl import COMMON, ROOT, start_site

REDIS_SERVER = "/usr/bin/redis-server"


def start_redis(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen([*command, "--dir", str(directory)], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return proc, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("redis-server did not start")


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) the process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(
    url: str, redis_url: str, processes: int, frontier: bool, work: Path, run_id: str, servers: dict[str, int]
) -> dict[str, Any]:
    procs = []
    before = {name: cpu_seconds(pid) for name, pid in servers.items()}
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    for index in range(processes):
        directory = work / f"{run_id}-{index}"
        settings = {
            **COMMON,
            "EXTENSIONS": json.dumps({"scrapy.extensions.telnet.TelnetConsole": None, "bench.components.StatsDump": 0}),
            "EXTRACTED_DOCS_DIR": str(directory / "extracted-docs"),
            "BENCH_STATS_FILE": str(directory / "stats.json"),
        }
        if frontier:
            settings |= {"FRONTIER_ENABLED": "True", "FRONTIER_RUN": run_id}
        command = [sys.executable, "-m", "scrapy", "crawl", "docs", "-a", f"start_urls={url}/"]
        for name, value in settings.items():
            command += ["-s", f"{name}={value}"]
        env = {**os.environ, "FRONTIER_REDIS_URL": redis_url}
        procs.append((directory, subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)))
    stats = []
    for directory, proc in procs:
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"a crawl failed ({proc.returncode}): {err[-2000:]}")
        stats.append(json.loads((directory / "stats.json").read_text()))
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    crawl_cpu = (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)
    server_cpu = {name: round(cpu_seconds(pid) - before[name], 2) for name, pid in servers.items()}
    pages = sum(s.get("item_scraped_count", 0) for s in stats)
    window = max(s.get("elapsed_time_seconds", 0) for s in stats)
    return {
        "pages": pages,
        "pages_per_process": [s.get("item_scraped_count", 0) for s in stats],
        "crawl_s": round(window, 2),
        "pages_per_s": round(pages / window, 1) if window else 0.0,
        "wall_s": round(wall, 2),
        # CPU seconds of the run, start-up and closing stages included: the crawl
        # processes, and the site's and Redis's processes
        "cpu_s": {"crawlers": round(crawl_cpu, 2), **server_cpu},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    configurations = [("no frontier", 1, False), ("frontier", 1, True), ("frontier", 2, True), ("frontier", 3, True)]
    samples: dict[str, list[dict[str, Any]]] = {f"{kind} x{n}": [] for kind, n, _ in configurations}
    with tempfile.TemporaryDirectory(prefix="bench-frontier-") as tmp:
        work = Path(tmp)
        site, url = start_site(args.pages, noisy=False)
        try:
            redis, redis_url = start_redis(work)
        except BaseException:  # (redis-server missing or not starting): the site is stopped too
            site.terminate()
            site.wait()
            raise
        try:
            for attempt in range(args.repeat):
                for kind, n, frontier in configurations:
                    label = f"{kind} x{n}"
                    servers = {"site": site.pid, "redis": redis.pid}
                    result = run(url, redis_url, n, frontier, work, f"b{attempt}-{n}-{int(frontier)}", servers)
                    samples[label].append(result)
                    print(f"{label}: {result}", file=sys.stderr, flush=True)
        finally:
            site.terminate()
            redis.terminate()
            site.wait()
            redis.wait()
    best = {label: max(runs, key=lambda r: r["pages_per_s"]) for label, runs in samples.items()}
    one = best["frontier x1"]["pages_per_s"]
    print(f"{args.pages} pages, best of {args.repeat}; ratio: pages/s against one frontier process")
    header = f"{'configuration':<16} {'pages':>6} {'crawl s':>8} {'pages/s':>8} {'ratio':>6} {'wall s':>7}"
    print(f"{header}  pages per process, CPU s")
    for label, result in best.items():
        ratio = result["pages_per_s"] / one if one else 0.0
        result["ratio"] = round(ratio, 2)
        print(
            f"{label:<16} {result['pages']:>6} {result['crawl_s']:>8} {result['pages_per_s']:>8} "
            f"{ratio:>6.2f} {result['wall_s']:>7}  {result['pages_per_process']}, {result['cpu_s']}"
        )
    if args.json:
        args.json.write_text(json.dumps({"pages": args.pages, "repeat": args.repeat, "results": best}, indent=2))


if __name__ == "__main__":
    main()

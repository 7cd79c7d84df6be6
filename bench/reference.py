"""A fixed CPU workload: how fast this machine runs Python right now.

    python -m bench.reference [ROUNDS]      # the workload once (ROUNDS: 120)

The growth benchmark (``bench.growth``) runs it in a subprocess of its own just before
and just after each crawl and divides the crawl's CPU per page by it: a crawl of 10,000
pages and one of 100,000 run an hour apart, and a shared machine's speed drifts by up to
25% in an hour (two runs of the same code measured a 10,000-page recrawl at 1.60 and
1.93 ms a page). The workload does what a crawl's CPU does, in the same mix each time:
HTML parsed with lxml, JSON written and read, SHA-256, SQLite writes and reads, and
plain Python (dicts, strings, small objects). It never changes with the crawler's code:
the reference of two checkouts is the same work.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: rounds of the workload (about 1.5 s of CPU on this 2-core machine)
ROUNDS = 120


def page(number: int) -> str:
    """A page of about 4 kB, as the generated site's (``bench/site.py``)."""
    items = "".join(f"<li><a href='/p/{number}/{i}'>link {i} of page {number}</a></li>" for i in range(20))
    body = "".join(f"<p>Paragraph {i} of page {number}: some words to parse and hash.</p>" for i in range(30))
    return f"<html><head><title>Page {number}</title></head><body><nav><ul>{items}</ul></nav>{body}</body></html>"


def workload(rounds: int = ROUNDS) -> int:
    """The work, ``rounds`` times over; a number of it (so nothing is optimised away)."""
    from lxml import html

    total = 0
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE pages (key TEXT PRIMARY KEY, record TEXT)")
    for r in range(rounds):
        for number in range(50):
            text = page(r * 50 + number)
            tree = html.fromstring(text)
            words = " ".join(tree.itertext()).split()
            counts: dict[str, int] = {}
            for word in words:
                counts[word] = counts.get(word, 0) + 1
            record = {"url": f"http://site/{number}", "links": tree.xpath("//a/@href"), "counts": counts}
            encoded = json.dumps(record, sort_keys=True)
            key = hashlib.sha256(encoded.encode()).hexdigest()
            db.execute("INSERT OR REPLACE INTO pages VALUES (?, ?)", (key, encoded))
            total += len(json.loads(db.execute("SELECT record FROM pages WHERE key = ?", (key,)).fetchone()[0]))
    db.close()
    return total


def measure(rounds: int = ROUNDS) -> float:
    """CPU seconds (user + sys) of the workload in a new Python process."""
    proc = subprocess.Popen([sys.executable, "-m", "bench.reference", str(rounds)], stdout=subprocess.DEVNULL, cwd=ROOT)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError("bench.reference failed")
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    print(workload(int(sys.argv[1]) if len(sys.argv) > 1 else ROUNDS))

"""The revisit schedule against a simulated site, night after night.

A generated site whose pages change by a per-page random process (daily change
probabilities spread over three orders of magnitude, from once in 1,000 days to once in
3; a section of 30% of the pages that never changes), on two hosts: two pages in three
on one whose sitemap lastmod is right, one in three on one whose lastmod is the build
date (it moves on every page every night: not to be trusted). ``--stuck`` adds a third
host whose lastmod stays put while the text changes; ``--lying-etag`` one whose lastmod
is the build date and whose ETag never changes (a 304 whatever the page says, until the
validators' sample catches it and the host is sent no ETag). Every other host's ETag
moves exactly when its page changes.

A first crawl, then every night the crawler asks
:class:`crawler.incremental.revisit.RevisitPolicy` (the code the crawl runs) which known
pages to request; a requested page shows whether it changed since its last check.
Reported: the recrawls' requests against requesting every page, the changes seen the
same night (per host), the mean and longest delay, and the observed miss rate (the
sampled skipped pages found changed) against the true one (every skipped page).

    python -m bench.revisit_sim [--pages 3000] [--nights 30] [--draw 1] [--stuck] [--lying-etag] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from crawler.incremental.revisit import RevisitPolicy, observe, observe_validator

HOSTS = ("right-lastmod", "build-date-lastmod", "stuck-lastmod", "lying-etag")


@dataclass
class Page:
    host: str
    rate: float  # the probability of a change on a given day
    version: int = 0  # changes so far
    changed_on: int | None = None  # the night of the last change, for its lastmod
    seen_version: int = 0  # the version the cache holds
    pending_since: list[int] = field(default_factory=list)  # nights of changes not seen yet
    state: dict[str, Any] | None = None


def make_site(pages: int, rng: random.Random, hosts: tuple[str, ...]) -> list[Page]:
    site = []
    for i in range(pages):
        host = hosts[i % len(hosts)]
        # 30%: a section that never changes; the rest once in 1,000 days to once in 3
        rate = 0.0 if rng.random() < 0.3 else 10 ** rng.uniform(-3, -0.5)
        site.append(Page(host, rate))
    return site


def lastmod(page: Page, night: int) -> str:
    if page.host in ("build-date-lastmod", "lying-etag"):
        return f"night-{night}"
    if page.host == "stuck-lastmod":
        return "night-0"
    return f"night-{page.changed_on or 0}"


def simulate(
    pages: int, nights: int, seed: int, policy: RevisitPolicy, *, stuck: bool = False, lying_etag: bool = False
) -> dict[str, Any]:
    rng = random.Random(seed)
    hosts_of_site = HOSTS[:3] if stuck else ("right-lastmod", "right-lastmod", "build-date-lastmod")
    if lying_etag:
        hosts_of_site = (*hosts_of_site, "lying-etag")
    site = make_site(pages, rng, hosts_of_site)
    used = tuple(dict.fromkeys(hosts_of_site))
    start = datetime(2026, 1, 1, 2, 0, tzinfo=UTC)
    hosts: dict[str, dict[str, Any]] = {}
    requests = skipped = sampled = sampled_changed = skipped_changed = 0
    delays: dict[str, list[int]] = {host: [] for host in used}
    etags: dict[str, dict[str, Any]] = {}  # host -> its ETag's trust record
    hidden = dict.fromkeys(used, 0)  # changes a 304 hid that night
    distrusted: dict[str, int] = {}  # host -> the night its ETag was first not believed
    for night in range(nights + 1):  # night 0: the first crawl
        # (a night's crawl starts a few minutes later or earlier than the last)
        now = start + timedelta(days=night, minutes=rng.uniform(-20, 20))
        if night:
            for page in site:
                if page.rate and rng.random() < page.rate:
                    page.version += 1
                    page.changed_on = night
                    page.pending_since.append(night)
        observations: dict[str, dict[str, int]] = {host: {} for host in used}
        etag_seen: dict[str, dict[str, int]] = {host: {} for host in used}
        run_id = f"run-{night}"
        for index, page in enumerate(site):
            mod = lastmod(page, night)
            decision, _ = policy.decide(page.state, hosts.get(page.host), mod, now)
            changed = page.version != page.seen_version
            if decision == "skip":
                skipped += 1
                skipped_changed += changed
                if not policy.sampled(run_id, str(index)):
                    continue
                sampled += 1
                sampled_changed += changed
            requests += 1
            sent, _ = policy.validators({"etag": etags.get(page.host)}, run_id=run_id, url_hash=str(index))
            moved = changed and page.host != "lying-etag"  # the page's ETag against the stored one
            # a 304: taken as unchanged (a change behind it is hidden until a 200)
            not_modified = page.state is not None and "etag" in sent and not moved
            hidden[page.host] += changed and not_modified
            state, seen = policy.checked(page.state, changed=changed and not not_modified, lastmod=mod, now=now)
            if page.state is None:
                state["interval"] = policy.min_interval  # the first crawl: nothing to compare
                seen = None
            elif not not_modified:  # a 200: its ETag moved with the change, stayed without one, or stayed through it
                observation = "agree" if moved == changed else "stale"
                counts = etag_seen[page.host]
                counts[observation] = counts.get(observation, 0) + 1
                counts["announced"] = counts.get("announced", 0) + (moved and changed)
            page.state = state
            if seen:
                observations[page.host][seen] = observations[page.host].get(seen, 0) + 1
            if not_modified:
                continue
            delays[page.host] += [night - since for since in page.pending_since]
            page.pending_since.clear()
            page.seen_version = page.version
        for host, seen in observations.items():
            hosts[host] = observe(hosts.get(host), seen)
        for host, counts in etag_seen.items():
            if counts:
                etags[host] = observe_validator(etags.get(host), counts)
                if not policy.believed(etags[host]):
                    distrusted.setdefault(host, night)
    every = pages * (nights + 1)
    first = pages  # the first crawl requests every page
    changes = {host: len(found) for host, found in delays.items()}
    report: dict[str, Any] = {
        "pages": pages,
        "nights": nights,
        "requests": requests,
        # the nightly recrawls' requests against requesting every page each night
        "requests_share": round((requests - first) / (every - first), 4),
        "requests_share_with_first_crawl": round(requests / every, 4),
        "trusted": sorted(host for host in used if policy.trusted(hosts.get(host))),
        "hosts": {},
        "miss_rate_true": round(skipped_changed / skipped, 5) if skipped else 0.0,
        "miss_rate_observed": round(sampled_changed / sampled, 5) if sampled else 0.0,
        "sampled": sampled,
        "skipped": skipped,
    }
    for host in used:
        found = delays[host]
        report["hosts"][host] = {
            "changes_seen": changes[host],
            "same_night": round(sum(1 for d in found if d == 0) / len(found), 4) if found else 1.0,
            "mean_delay_days": round(sum(found) / len(found), 3) if found else 0.0,
            "max_delay_days": max(found, default=0),
            "trust": hosts.get(host),
            "changes_hidden_by_304": hidden[host],
            "etag_distrusted_after_night": distrusted.get(host),
            "etag": policy.signals({"etag": etags.get(host) or {}})["etag"],
        }
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--nights", type=int, default=30, help="nightly recrawls after the first crawl")
    parser.add_argument("--draw", type=int, default=1, help="which random site (and nights) to draw")
    parser.add_argument("--stuck", action="store_true", help="a third host whose lastmod never moves")
    parser.add_argument("--lying-etag", action="store_true", help="a host whose ETag never changes")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    policy = RevisitPolicy()
    report = simulate(args.pages, args.nights, args.draw, policy, stuck=args.stuck, lying_etag=args.lying_etag)
    report["policy"] = policy.__dict__
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()

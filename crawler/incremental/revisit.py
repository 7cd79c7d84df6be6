"""When a known page is requested again: a revisit schedule per page, and trust per
host in the sitemap's ``lastmod`` and in its HTTP validators.

Requests, not bytes, are what an unchanged recrawl costs, so a page is not requested
while its schedule says it cannot have changed (it stays in the cache as unchanged,
its stored response replayed). Intervals adapt to each page's history (as Nutch's
AdaptiveFetchSchedule); a host's lastmod or validators are trusted only while they
agree with the changes actually seen, and a random ``sample`` of skipped pages
measures the miss rate. Known broken links wait on a schedule too. See docs/revisit.md.

Pure functions over plain records (the page record's and the domain record's
``revisit`` field): the middleware decides, the pipeline updates.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

DAY = 86400.0
#: a run a little early still checks a page that is due (nightly runs drift)
EARLY = 0.9

Decision = Literal["request", "skip"]
#: a signal's trust record: its observations, and the streak that earns trust
COUNTS = ("agree", "noisy", "stale", "streak")
#: the HTTP validators a host's trust is kept for (domain record ``revisit[name]``):
#: name -> the response header
VALIDATORS = {"etag": "ETag", "last_modified": "Last-Modified"}
#: a host's known broken links kept (domain record ``revisit["missing"]``), the last
#: checked first: past it, the oldest are forgotten (and asked for again)
MISSING_KEPT = 2000


def missing_links(host: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """A host's known broken links (its trust record's ``missing``): url_hash ->
    ``url``, ``status`` and the schedule's ``interval`` and ``verified_at``.

    >>> missing_links({"missing": {"h": {"url": "http://a/x", "status": 404}}})["h"]["status"]
    404
    >>> missing_links(None), missing_links({"missing": []})
    ({}, {})
    """
    value = (host or {}).get("missing")
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class RevisitPolicy:
    """The schedule's bounds and rates (the ``REVISIT_*`` settings)."""

    min_interval: float = 1.0  # days
    max_staleness: float = 30.0  # days
    grow: float = 2.0
    shrink: float = 0.5
    sample: float = 0.02
    trust_evidence: int = 20

    def __post_init__(self) -> None:
        if not 0 <= self.min_interval <= self.max_staleness:
            raise ValueError(
                f"REVISIT_MIN_INTERVAL ({self.min_interval}) must be >= 0 and <= REVISIT_MAX_STALENESS "
                f"({self.max_staleness}) days"
            )
        if not 0 <= self.sample <= 1:
            raise ValueError(f"REVISIT_SAMPLE must be a share between 0 and 1, got {self.sample}")
        if self.trust_evidence < 1:
            raise ValueError(f"REVISIT_TRUST_EVIDENCE must be >= 1, got {self.trust_evidence}")

    # -- deciding -------------------------------------------------------------

    def decide(
        self,
        page: dict[str, Any] | None,
        host: dict[str, Any] | None,
        lastmod: str | None,
        now: datetime,
        *,
        checked: str | None = None,
    ) -> tuple[Decision, str]:
        """Whether a known page is requested now, and why.

        ``page`` is the page record's ``revisit`` state (None: never scheduled),
        ``host`` the host's trust record, ``lastmod`` the page's sitemap lastmod,
        ``checked`` when it was last requested at all: no page is requested again
        sooner than ``min_interval`` after that, whatever the run that checked it.

        >>> policy = RevisitPolicy(min_interval=1, max_staleness=10)
        >>> now = datetime(2026, 11, 26, tzinfo=UTC)
        >>> policy.decide(None, None, None, now)
        ('request', 'unscheduled')
        >>> policy.decide(None, None, None, now, checked="2026-11-25T23:00:00+00:00")
        ('skip', 'min_interval')
        >>> policy.decide(None, None, None, now, checked="2026-11-25T00:00:00+00:00")
        ('request', 'unscheduled')
        >>> page = {"interval": 4.0, "verified_at": "2026-11-24T00:00:00+00:00"}
        >>> policy.decide(page, None, None, now)
        ('skip', 'interval')
        >>> policy.decide({**page, "verified_at": "2026-11-22T00:00:00+00:00"}, None, None, now)
        ('request', 'due')
        >>> trusted = {"streak": 30, "noisy": 0, "agree": 30}
        >>> policy.decide({**page, "lastmod": "2026-11-01"}, trusted, "2026-11-25", now)
        ('request', 'lastmod_moved')
        >>> policy.decide({**page, "verified_at": "2026-11-20T00:00:00+00:00", "lastmod": "2026-11-01"},
        ...               trusted, "2026-11-01", now)
        ('skip', 'lastmod_unchanged')
        """
        verified = parse_time(page.get("verified_at")) if page else None
        if page is None or verified is None:
            last = parse_time(checked)
            if last is not None and (now - last).total_seconds() / DAY < self.min_interval * EARLY:
                return "skip", "min_interval"
            return "request", "unscheduled"
        elapsed = (now - verified).total_seconds() / DAY
        if elapsed >= self.max_staleness * EARLY:
            return "request", "max_staleness"
        if lastmod is not None and page.get("lastmod") is not None and self.lastmod_informs(host):
            if lastmod != page["lastmod"]:
                return "request", "lastmod_moved"
            if self.trusted(host):
                return "skip", "lastmod_unchanged"
        if elapsed >= self.interval(page) * EARLY:
            return "request", "due"
        return "skip", "interval"

    def sampled(self, run_id: str, url_hash: str) -> bool:
        """Whether a page the schedule skips is requested anyway this run: a share
        ``sample`` of them, a different draw each run (stable within one).

        >>> RevisitPolicy(sample=0).sampled("run", "abc"), RevisitPolicy(sample=1).sampled("run", "abc")
        (False, True)
        """
        digest = hashlib.sha256(f"{run_id}\0{url_hash}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < self.sample

    def interval(self, page: dict[str, Any]) -> float:
        value = page.get("interval")
        if not isinstance(value, (int, float)) or value != value:  # (NaN)
            return self.min_interval
        return min(max(float(value), self.min_interval), self.max_staleness)

    # -- trust ------------------------------------------------------------------

    def trusted(self, host: dict[str, Any] | None) -> bool:
        """A host whose lastmod agreed with the text ``trust_evidence`` times in a row,
        less than half of its observations noisy.

        >>> policy = RevisitPolicy(trust_evidence=3)
        >>> policy.trusted({"streak": 3, "agree": 3, "noisy": 0}), policy.trusted({"streak": 2, "agree": 9})
        (True, False)
        >>> policy.trusted({"streak": 9, "agree": 9, "noisy": 9})  # a build date moves on every page
        False
        """
        if not host:
            return False
        return int(host.get("streak", 0)) >= self.trust_evidence and self.lastmod_informs(host)

    @staticmethod
    def lastmod_informs(host: dict[str, Any] | None) -> bool:
        """Whether a host's moved lastmod means anything: not when it moved without a
        change in half of the observations or more (a build date)."""
        if not host:
            return True  # nothing known yet: a moved lastmod is worth a request
        agree, noisy = int(host.get("agree", 0)), int(host.get("noisy", 0))
        return noisy * 2 < agree + noisy or agree + noisy == 0

    def believed(self, validator: dict[str, Any] | None) -> bool:
        """Whether a host's validator (its trust record) is sent: always, until it was
        stale (it stayed while the text changed), then once it announced
        ``trust_evidence`` changes in a row (pages that stayed the same prove nothing
        of a validator that never moves).

        >>> policy = RevisitPolicy(trust_evidence=2)
        >>> policy.believed(None), policy.believed({"stale": 1, "streak": 1})
        (True, False)
        >>> policy.believed({"stale": 1, "streak": 2})
        True
        """
        if not validator or not int(validator.get("stale", 0)):
            return True
        return int(validator.get("streak", 0)) >= self.trust_evidence

    def validators(
        self, host: dict[str, Any] | None, *, run_id: str, url_hash: str
    ) -> tuple[frozenset[str], str | None]:
        """Which stored validators a request for a known page sends (names of
        :data:`VALIDATORS`), and why one is left out: ``sampled`` (the share ``sample`` of conditional requests
        sent without validators, a different draw than the schedule's), ``distrusted``
        (the host's validator was stale).

        >>> policy = RevisitPolicy(sample=0, trust_evidence=2)
        >>> sorted(policy.validators(None, run_id="r", url_hash="a")[0])
        ['etag', 'last_modified']
        >>> policy.validators({"etag": {"stale": 1}}, run_id="r", url_hash="a")
        (frozenset({'last_modified'}), 'distrusted')
        """
        if self.sampled(f"{run_id}\0validators", url_hash):
            return frozenset(), "sampled"
        trust = host or {}
        sent = frozenset(name for name in VALIDATORS if self.believed(trust.get(name)))
        return sent, (None if len(sent) == len(VALIDATORS) else "distrusted")

    def signals(self, host: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
        """A host's change signals as people read them: for each (``lastmod`` and the
        :data:`VALIDATORS`), its ``state`` and counts. A lastmod is ``trusted``,
        ``learning`` or ``noisy``; a validator ``trusted`` (sent), ``distrusted`` (stale,
        not sent) or ``noisy``; either is ``unknown`` before any observation.

        >>> policy = RevisitPolicy(trust_evidence=2)
        >>> signals = policy.signals({"streak": 2, "agree": 2, "etag": {"agree": 3, "stale": 1}})
        >>> [(name, signal["state"]) for name, signal in signals.items()]
        [('lastmod', 'trusted'), ('etag', 'distrusted'), ('last_modified', 'unknown')]
        """
        trust = host or {}
        out: dict[str, dict[str, Any]] = {}
        for name in ("lastmod", *VALIDATORS):
            record = trust if name == "lastmod" else trust.get(name)
            counts = (
                {key: int(record.get(key, 0)) for key in COUNTS}
                if isinstance(record, dict)
                else dict.fromkeys(COUNTS, 0)
            )
            if not counts["agree"] + counts["noisy"] + counts["stale"]:
                state = "unknown"
            elif name == "lastmod":
                state = "trusted" if self.trusted(trust) else "learning" if self.lastmod_informs(trust) else "noisy"
            else:
                state = (
                    "distrusted"
                    if not self.believed(counts)
                    else "trusted"
                    if self.lastmod_informs(counts)
                    else "noisy"
                )
            out[name] = {"state": state, **counts}
        return out

    # -- updating -----------------------------------------------------------------

    def checked(
        self, page: dict[str, Any] | None, *, changed: bool, lastmod: str | None, now: datetime
    ) -> tuple[dict[str, Any], str | None]:
        """The page's new state after a check (it was requested and compared), and the
        lastmod observation it makes (``agree``, ``stale``, ``noisy`` or None).

        >>> policy = RevisitPolicy(min_interval=1, max_staleness=10)
        >>> now = datetime(2026, 11, 26, tzinfo=UTC)
        >>> state, seen = policy.checked({"interval": 4.0, "lastmod": "a"}, changed=False, lastmod="a", now=now)
        >>> state["interval"], seen
        (8.0, 'agree')
        >>> policy.checked({"interval": 4.0, "lastmod": "a"}, changed=True, lastmod="a", now=now)[0]["interval"]
        2.0
        >>> policy.checked({"interval": 4.0, "lastmod": "a"}, changed=True, lastmod="a", now=now)[1]
        'stale'
        >>> policy.checked({"interval": 4.0, "lastmod": "a"}, changed=False, lastmod=None, now=now)[0]["lastmod"]
        'a'
        """
        before = page or {}
        interval = self.interval(before) if before else self.min_interval
        if before:
            interval = interval * (self.shrink if changed else self.grow)
        interval = min(max(interval, self.min_interval), self.max_staleness)
        state: dict[str, Any] = {"interval": round(interval, 4), "verified_at": now.isoformat(timespec="seconds")}
        old = before.get("lastmod")
        if lastmod is not None or old is not None:
            # a run that read no lastmod for the page (its sitemap failed) keeps the last one
            state["lastmod"] = lastmod if lastmod is not None else old
        observation = None
        if lastmod is not None and old is not None:
            moved = lastmod != old
            observation = "agree" if moved == changed else ("noisy" if moved else "stale")
        return state, observation


class RevisitShare(Protocol):
    """What the crawl processes of one shared run (``FRONTIER_ENABLED``) decide on
    alike, held where all of them read it (:class:`crawler.frontier.revisit.SharedRevisit`):
    the sitemaps' lastmods (read by the one process that reads the sitemaps) and each
    host's trust as the run first read it, so that every process decides a page as one
    process would."""

    #: the id the sample is drawn with: the run's, the same in every process
    draw: str

    def publish_lastmods(self, lastmods: Mapping[str, str]) -> None:
        """The sitemaps' lastmods, for the other processes (before any page is queued)."""

    def lastmods(self) -> dict[str, str]:
        """The lastmods the run's sitemaps listed (url_hash -> lastmod)."""

    def host_trust(self, domain: str, read: Callable[[], dict[str, Any] | None]) -> dict[str, Any] | None:
        """The host's trust as the run first read it (``read()``, by the first process
        to ask): the same in every process, whatever another wrote since."""


@dataclass
class RevisitRun:
    """What the schedule did this run (in memory, one crawl process; in a shared run,
    what the processes decide alike comes from :attr:`share`)."""

    #: url_hash -> the page's lastmod in this run's sitemaps (read them through
    #: :meth:`listed`: in a shared run, another process may have read the sitemaps)
    lastmods: dict[str, str] = field(default_factory=dict)
    #: a shared run's common ground (FRONTIER_ENABLED); None: this process alone
    share: RevisitShare | None = None
    #: pages the schedule skipped (replayed, not requested)
    skipped: set[str] = field(default_factory=set)
    #: pages the schedule would have skipped, requested to measure the miss rate
    sampled: set[str] = field(default_factory=set)
    #: of those, the pages found changed: changes the schedule would have missed
    sampled_changed: int = 0
    #: host -> lastmod observations of this run (agree, noisy, stale)
    observations: dict[str, dict[str, int]] = field(default_factory=dict)
    #: the oldest check of a page skipped this run (ISO time)
    oldest_verified: str | None = None
    #: url_hash -> each validator a 200 of the page carried, as it was stored too:
    #: whether it moved (until the page's content hash says whether it changed)
    validator_moves: dict[str, dict[str, bool]] = field(default_factory=dict)
    #: host -> validator -> observations of this run (agree, noisy, stale, and
    #: ``announced``: the agreeing ones that were changes)
    validator_observations: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    #: host -> url_hash -> the known broken link's entry after this run's 404 or 410
    #: (:func:`missing_links`): links to pages the cache never had
    missing_seen: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    #: host -> url_hashes of known broken links that answered with a page this run
    missing_found: dict[str, set[str]] = field(default_factory=dict)
    #: known broken links not asked for again this run (their 404 replayed)
    missing_skipped: int = 0
    _shared_read: bool = field(default=False, repr=False)

    def listed(self) -> dict[str, str]:
        """url_hash -> lastmod of this run's sitemaps: those this process read, and in a
        shared run those the process that read the sitemaps published (read once, at the
        first page decided: none is queued before they are published).

        >>> run = RevisitRun(lastmods={"a": "1"})
        >>> run.listed()
        {'a': '1'}
        """
        if self.share is not None and not self._shared_read:
            self._shared_read = True
            self.lastmods = {**self.share.lastmods(), **self.lastmods}
        return self.lastmods

    def draw(self, run_id: str) -> str:
        """The id the sample is drawn with: the shared run's, else this run's ``run_id``."""
        return self.share.draw if self.share is not None else run_id

    def observe(self, host: str, observation: str) -> None:
        seen = self.observations.setdefault(host, {})
        seen[observation] = seen.get(observation, 0) + 1

    def note_validators(self, url_hash: str, stored: Mapping[str, str], response: Mapping[str, str]) -> None:
        """A 200 for a known page: which of its validators moved since the stored
        response (each one both carry; header names as :data:`VALIDATORS` spells them).

        >>> run = RevisitRun()
        >>> run.note_validators("a", {"ETag": '"1"', "Last-Modified": "x"}, {"ETag": '"1"'})
        >>> run.validator_moves
        {'a': {'etag': False}}
        """
        moves = {
            name: stored[header] != response[header]
            for name, header in VALIDATORS.items()
            if stored.get(header) and response.get(header)
        }
        if moves:
            self.validator_moves[url_hash] = moves

    def observe_validators(self, host: str, url_hash: str, *, changed: bool) -> None:
        """The page's content hash said whether it ``changed``: each validator noted
        for it agreed, was stale (it stayed) or noisy (it moved).

        >>> run = RevisitRun(validator_moves={"a": {"etag": False, "last_modified": True}})
        >>> run.observe_validators("h", "a", changed=True)
        >>> run.validator_observations
        {'h': {'etag': {'stale': 1}, 'last_modified': {'agree': 1, 'announced': 1}}}
        """
        for name, moved in self.validator_moves.pop(url_hash, {}).items():
            seen = self.validator_observations.setdefault(host, {}).setdefault(name, {})
            observation = "agree" if moved == changed else ("noisy" if moved else "stale")
            seen[observation] = seen.get(observation, 0) + 1
            if observation == "agree" and changed:
                seen["announced"] = seen.get("announced", 0) + 1

    def note_missing(self, host: str, url_hash: str, entry: dict[str, Any]) -> None:
        """A link to a page the cache never had answered 404 or 410: its ``entry``
        (``url``, ``status``, the schedule's state after this check)."""
        self.missing_seen.setdefault(host, {})[url_hash] = entry

    def note_found(self, host: str, url_hash: str) -> None:
        """A known broken link answered with a page: it is no longer missing."""
        self.missing_found.setdefault(host, set()).add(url_hash)

    def observed_hosts(self) -> list[str]:
        """The hosts this run made an observation of, sorted."""
        return sorted({*self.observations, *self.validator_observations, *self.missing_seen, *self.missing_found})

    def add_trust(self, host: str, record: dict[str, Any] | None) -> dict[str, Any]:
        """The host's domain record with this run's observations added to its trust
        (``revisit``: the lastmod's counts, and each validator's under its name).

        >>> run = RevisitRun(observations={"h": {"agree": 1}}, validator_observations={"h": {"etag": {"stale": 1}}})
        >>> run.add_trust("h", {"hashes": []})["revisit"]["etag"]
        {'streak': 0, 'agree': 0, 'noisy': 0, 'stale': 1}
        """
        updated = dict(record or {})
        trust = updated.get("revisit") if isinstance(updated.get("revisit"), dict) else None
        if host in self.observations or trust is None:
            trust = observe(trust, self.observations.get(host, {}))
        for name, seen in self.validator_observations.get(host, {}).items():
            before = trust.get(name) if isinstance(trust.get(name), dict) else None
            trust = {**trust, name: observe_validator(before, seen)}
        if host in self.missing_seen or host in self.missing_found:
            missing = {**missing_links(trust), **self.missing_seen.get(host, {})}
            for url_hash in self.missing_found.get(host, ()):
                missing.pop(url_hash, None)
            if len(missing) > MISSING_KEPT:
                newest = sorted(missing, key=lambda key: str(missing[key].get("verified_at", "")), reverse=True)
                missing = {key: missing[key] for key in newest[:MISSING_KEPT]}
            trust = {**trust, "missing": missing}
        updated["revisit"] = trust
        return updated

    def tally(self) -> dict[str, int]:
        """This run's observations and sampled changes as flat counts (what a crawl
        process of a shared run adds to the run's part: :meth:`add_tally` reads it).

        >>> RevisitRun(observations={"h": {"agree": 2}}, sampled_changed=1,
        ...            validator_observations={"h": {"etag": {"noisy": 1}}}).tally()
        {'sampled_changed': 1, 'lastmod|h|agree': 2, 'etag|h|noisy': 1}
        """
        counts = {"sampled_changed": self.sampled_changed} if self.sampled_changed else {}
        if self.missing_skipped:
            counts["missing_skipped"] = self.missing_skipped
        for host, seen in self.observations.items():
            counts.update({f"lastmod|{host}|{kind}": n for kind, n in seen.items()})
        for host, by_name in self.validator_observations.items():
            for name, seen in by_name.items():
                counts.update({f"{name}|{host}|{kind}": n for kind, n in seen.items()})
        return counts

    def add_tally(self, counts: Mapping[str, int]) -> None:
        """Adds the counts of :meth:`tally` (a shared run's parts, added up) to this run.

        >>> run = RevisitRun()
        >>> run.add_tally({"sampled_changed": 1, "lastmod|h|agree": 2, "etag|h|noisy": 1})
        >>> run.tally()
        {'sampled_changed': 1, 'lastmod|h|agree': 2, 'etag|h|noisy': 1}
        """
        for key, n in counts.items():
            if key == "sampled_changed":
                self.sampled_changed += n
                continue
            if key == "missing_skipped":
                self.missing_skipped += n
                continue
            name, host, kind = key.split("|", 2)
            if name == "lastmod":
                seen = self.observations.setdefault(host, {})
            else:
                seen = self.validator_observations.setdefault(host, {}).setdefault(name, {})
            seen[kind] = seen.get(kind, 0) + n

    def section(self, *, enabled: bool, skipping: bool) -> dict[str, Any]:
        """The run report's ``revisit`` section (``skipping``: False for a run that
        verified every page, ``-a redo=download``).

        >>> run = RevisitRun(skipped={"a", "b"}, sampled={"c"}, sampled_changed=1)
        >>> section = run.section(enabled=True, skipping=True)
        >>> section["requests_saved"], section["sampled"], section["miss_rate"]
        (2, 1, 1.0)
        """
        sampled = len(self.sampled)
        return {
            "enabled": enabled,
            "skipping": skipping,
            "requests_saved": len(self.skipped),
            # known broken links whose 404 was replayed, not asked for (not pages: not counted unchanged)
            "broken_links_not_rechecked": self.missing_skipped,
            "sampled": sampled,
            "sampled_changed": self.sampled_changed,
            # the share of the pages the schedule skips that had changed, as the sample saw it
            "miss_rate": round(self.sampled_changed / sampled, 4) if sampled else None,
            "oldest_verified": self.oldest_verified,
            "lastmod_observations": {host: dict(seen) for host, seen in sorted(self.observations.items())},
            "validator_observations": {
                host: {name: dict(seen) for name, seen in sorted(by_name.items())}
                for host, by_name in sorted(self.validator_observations.items())
            },
        }


def observe(host: dict[str, Any] | None, observations: dict[str, int]) -> dict[str, Any]:
    """A host's trust record with a run's observations added (a stale one starts the
    streak over: it must be earned again).

    >>> observe({"streak": 5, "agree": 5}, {"agree": 2})
    {'streak': 7, 'agree': 7, 'noisy': 0, 'stale': 0}
    >>> observe({"streak": 5, "agree": 5}, {"agree": 2, "stale": 1})
    {'streak': 0, 'agree': 7, 'noisy': 0, 'stale': 1}
    """
    record = {"streak": 0, "agree": 0, "noisy": 0, "stale": 0, **(host or {})}
    for name in ("agree", "noisy", "stale"):
        record[name] = int(record.get(name, 0)) + observations.get(name, 0)
    record["streak"] = 0 if observations.get("stale") else int(record["streak"]) + observations.get("agree", 0)
    return record


def observe_validator(validator: dict[str, Any] | None, observations: dict[str, int]) -> dict[str, Any]:
    """A validator's trust record with a run's observations added: its streak counts
    the changes it announced (``announced``) since it was last stale.

    >>> observe_validator({"streak": 1, "agree": 4, "stale": 1}, {"agree": 3, "announced": 1})
    {'streak': 2, 'agree': 7, 'noisy': 0, 'stale': 1}
    >>> observe_validator({"streak": 5, "agree": 5}, {"agree": 2, "stale": 1})["streak"]
    0
    """
    record = observe(validator, {name: observations.get(name, 0) for name in ("agree", "noisy", "stale")})
    streak = int((validator or {}).get("streak", 0)) + observations.get("announced", 0)
    record["streak"] = 0 if observations.get("stale") else streak
    return record


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def older(value: str | None, than: str | None) -> str | None:
    """The older of two ISO times (None when both are).

    >>> older("2026-01-02T00:00:00+00:00", "2026-01-01T00:00:00+00:00")
    '2026-01-01T00:00:00+00:00'
    """
    times = [(parse_time(v), v) for v in (value, than) if parse_time(v) is not None]
    return min(times)[1] if times else None


def days_since(value: str | None, now: datetime) -> float | None:
    then = parse_time(value)
    return None if then is None else max(0.0, (now - then) / timedelta(days=1))

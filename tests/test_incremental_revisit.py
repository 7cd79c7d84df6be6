"""The revisit schedule's policy (crawler.incremental.revisit): pure functions, and the
simulation benchmark's targets on a small site (seeded: the same nights every run)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bench.revisit_sim import simulate
from crawler.incremental.revisit import MISSING_KEPT, RevisitPolicy, RevisitRun, missing_links, observe

NOW = datetime(2026, 11, 26, 2, 0, tzinfo=UTC)
TRUSTED = {"streak": 50, "agree": 50, "noisy": 0, "stale": 0}


def checked_ago(days, **state):
    return {"interval": 2.0, "verified_at": (NOW - timedelta(days=days)).isoformat(), **state}


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"min_interval": 5, "max_staleness": 2}, "REVISIT_MIN_INTERVAL"),
        ({"min_interval": -1}, "REVISIT_MIN_INTERVAL"),
        ({"sample": 1.5}, "REVISIT_SAMPLE"),
        ({"trust_evidence": 0}, "REVISIT_TRUST_EVIDENCE"),
    ],
)
def test_wrong_bounds_are_refused_naming_the_setting(settings, message):
    with pytest.raises(ValueError, match=message):
        RevisitPolicy(**settings)


def test_intervals_grow_while_unchanged_shrink_on_a_change_within_the_bounds():
    policy = RevisitPolicy(min_interval=1, max_staleness=10, grow=2, shrink=0.5)
    state, _ = policy.checked(None, changed=False, lastmod=None, now=NOW)
    intervals = [state["interval"]]
    for _ in range(6):
        state, _ = policy.checked(state, changed=False, lastmod=None, now=NOW)
        intervals.append(state["interval"])
    assert intervals == [1, 2, 4, 8, 10, 10, 10]
    state, _ = policy.checked(state, changed=True, lastmod=None, now=NOW)
    assert state["interval"] == 5
    assert state["verified_at"] == NOW.isoformat(timespec="seconds")


def test_max_staleness_requests_a_page_whatever_its_lastmod_says():
    policy = RevisitPolicy(min_interval=1, max_staleness=10)
    assert policy.decide(checked_ago(5, lastmod="x"), TRUSTED, "x", NOW) == ("skip", "lastmod_unchanged")
    assert policy.decide(checked_ago(10, lastmod="x"), TRUSTED, "x", NOW) == ("request", "max_staleness")


def test_an_untrusted_lastmod_that_stays_put_proves_nothing_but_one_that_moves_is_worth_a_request():
    policy = RevisitPolicy(min_interval=1, max_staleness=30)
    learning = {"streak": 3, "agree": 3}
    assert policy.decide(checked_ago(5, lastmod="x"), learning, "x", NOW) == ("request", "due")
    assert policy.decide(checked_ago(0.5, lastmod="x"), learning, "y", NOW) == ("request", "lastmod_moved")
    noisy = {"streak": 3, "agree": 3, "noisy": 40}  # a build date: moving means nothing
    assert policy.decide(checked_ago(0.5, lastmod="x"), noisy, "y", NOW) == ("skip", "interval")


def test_a_stale_lastmod_starts_the_trust_over():
    host = observe(None, {"agree": 25})
    assert RevisitPolicy().trusted(host)
    host = observe(host, {"agree": 5, "stale": 1})
    assert not RevisitPolicy().trusted(host) and host["stale"] == 1


def test_a_damaged_state_is_a_page_to_check():
    policy = RevisitPolicy()
    assert policy.decide({"verified_at": "yesterday"}, None, None, NOW) == ("request", "unscheduled")
    assert policy.interval({"interval": "x"}) == policy.min_interval


def test_a_page_without_history_waits_the_minimum_interval_from_its_last_request():
    """The former REVALIDATION_RECHECK_AFTER: one rule for "is this page due"."""
    now = datetime(2026, 11, 26, 12, tzinfo=UTC)
    policy = RevisitPolicy(min_interval=1.0)
    hour_ago = (now - timedelta(hours=1)).isoformat()
    assert policy.decide(None, None, None, now, checked=hour_ago) == ("skip", "min_interval")
    assert policy.decide({"interval": "x"}, None, None, now, checked=hour_ago) == ("skip", "min_interval")
    assert policy.decide(None, None, None, now, checked=(now - timedelta(days=1)).isoformat())[0] == "request"
    assert policy.decide(None, None, None, now, checked="not a time") == ("request", "unscheduled")
    assert RevisitPolicy(min_interval=0).decide(None, None, None, now, checked=now.isoformat())[0] == "request"


def test_the_sample_is_the_share_asked_for_and_another_draw_each_run():
    policy = RevisitPolicy(sample=0.02)
    first = {str(i) for i in range(20000) if policy.sampled("run-1", str(i))}
    second = {str(i) for i in range(20000) if policy.sampled("run-2", str(i))}
    assert 300 < len(first) < 500 and 300 < len(second) < 500
    assert len(first & second) < 50


def checked_validators(host, moves_and_changes, trust=None):
    """``trust`` (a domain record's ``revisit``) after a run that saw, for each page,
    whether its ETag moved and whether its text changed."""
    run = RevisitRun()
    for i, (moved, changed) in enumerate(moves_and_changes):
        run.note_validators(str(i), {"ETag": '"1"'}, {"ETag": '"2"' if moved else '"1"'})
        run.observe_validators(host, str(i), changed=changed)
    return run.add_trust(host, {"revisit": trust} if trust is not None else None)["revisit"]


def test_a_stale_validator_is_not_sent_until_it_announces_changes_again():
    policy = RevisitPolicy(sample=0, trust_evidence=2)
    assert policy.validators(None, run_id="r", url_hash="a") == (frozenset({"etag", "last_modified"}), None)
    trust = checked_validators("h", [(False, False), (False, True)])  # an ETag that stayed through an edit
    assert trust["etag"] == {"streak": 0, "agree": 1, "noisy": 0, "stale": 1}
    assert policy.validators(trust, run_id="r", url_hash="a") == (frozenset({"last_modified"}), "distrusted")
    assert policy.signals(trust)["etag"]["state"] == "distrusted"
    trust = checked_validators("h", [(False, False)] * 50, trust)  # pages that did not change prove nothing
    assert not policy.believed(trust["etag"])
    trust = checked_validators("h", [(True, True), (False, False), (True, True)], trust)  # two changes announced
    assert policy.believed(trust["etag"]) and policy.signals(trust)["etag"]["state"] == "trusted"
    trust = checked_validators("h", [(True, True), (False, True)], trust)  # and a stale one again
    assert not policy.believed(trust["etag"]) and trust["etag"]["stale"] == 2


def test_a_validator_that_moves_without_a_change_is_noisy_and_still_sent():
    policy = RevisitPolicy(sample=0)
    trust = checked_validators("h", [(True, False)] * 5)
    assert policy.signals(trust)["etag"] == {"state": "noisy", "agree": 0, "noisy": 5, "stale": 0, "streak": 0}
    assert policy.validators(trust, run_id="r", url_hash="a")[1] is None


def test_validator_trust_is_added_beside_the_lastmods_and_the_rest_of_the_record():
    run = RevisitRun(validator_observations={"h": {"last_modified": {"agree": 2, "announced": 1}}})
    record = run.add_trust("h", {"hashes": ["x"], "revisit": TRUSTED})
    assert record == {
        "hashes": ["x"],
        "revisit": {**TRUSTED, "last_modified": {**dict.fromkeys(("noisy", "stale"), 0), "agree": 2, "streak": 1}},
    }
    assert RevisitPolicy(trust_evidence=50).trusted(record["revisit"])  # the lastmod's trust untouched
    assert run.observed_hosts() == ["h"]


def test_known_broken_links_are_kept_with_the_trust_until_found_the_newest_first():
    run = RevisitRun()
    run.note_missing("h", "x", {"url": "http://h/x", "status": 404, "interval": 2.0, "verified_at": "2026-11-27"})
    run.note_found("h", "y")
    before = {"url": "http://h/y", "status": 410, "interval": 1.0, "verified_at": "2026-11-20"}
    record = run.add_trust("h", {"hashes": ["k"], "revisit": {**TRUSTED, "missing": {"y": before}}})
    assert record["hashes"] == ["k"] and RevisitPolicy(trust_evidence=50).trusted(record["revisit"])
    assert missing_links(record["revisit"]) == {"x": run.missing_seen["h"]["x"]}  # y answered with a page
    assert run.observed_hosts() == ["h"] and RevisitRun().add_trust("h", None)["revisit"].get("missing") is None
    merged = RevisitRun()  # a shared run's report adds up its processes' counts
    merged.add_tally(RevisitRun(missing_skipped=2).tally())
    merged.add_tally(RevisitRun(missing_skipped=1).tally())
    assert merged.section(enabled=True, skipping=True)["broken_links_not_rechecked"] == 3
    # past MISSING_KEPT, the links checked longest ago are forgotten (and asked for again)
    many = RevisitRun()
    for i in range(MISSING_KEPT + 2):
        many.note_missing("h", str(i), {"url": f"http://h/{i}", "status": 404, "verified_at": f"2026-11-{i:09d}"})
    kept = missing_links(many.add_trust("h", None)["revisit"])
    assert len(kept) == MISSING_KEPT and "0" not in kept and "1" not in kept and str(MISSING_KEPT + 1) in kept


def test_a_known_broken_link_is_decided_as_a_page_by_its_own_interval():
    policy = RevisitPolicy(min_interval=1, max_staleness=10)
    now = datetime(2026, 11, 27, tzinfo=UTC)
    entry, _ = policy.checked(None, changed=False, lastmod=None, now=now - timedelta(hours=2))
    assert policy.decide(entry, None, None, now) == ("skip", "interval")
    again, _ = policy.checked(entry, changed=False, lastmod=None, now=now)  # still missing: waits longer
    assert again["interval"] == 2.0
    assert policy.decide(again, None, None, now + timedelta(days=2)) == ("request", "due")


def test_the_validators_sample_is_the_share_asked_for_and_drawn_apart_from_the_schedules():
    policy = RevisitPolicy(sample=0.05)
    unconditional = {str(i) for i in range(10000) if policy.validators(None, run_id="r", url_hash=str(i))[1]}
    skipped_checked = {str(i) for i in range(10000) if policy.sampled("r", str(i))}
    assert 400 < len(unconditional) < 600 and len(unconditional & skipped_checked) < 60


def test_the_report_section_counts_what_the_run_did():
    run = RevisitRun(skipped={"a", "b", "c"}, sampled={"d", "e"}, sampled_changed=1)
    run.observe("docs.example.com", "agree")
    section = run.section(enabled=True, skipping=True)
    assert section == {
        "enabled": True,
        "skipping": True,
        "requests_saved": 3,
        "broken_links_not_rechecked": 0,
        "sampled": 2,
        "sampled_changed": 1,
        "miss_rate": 0.5,
        "oldest_verified": None,
        "lastmod_observations": {"docs.example.com": {"agree": 1}},
        "validator_observations": {},
    }


def test_the_simulated_site_meets_the_schedules_targets():
    report = simulate(900, 30, 1, RevisitPolicy())
    assert report["requests_share"] <= 0.15
    assert report["trusted"] == ["right-lastmod"]
    assert report["hosts"]["right-lastmod"]["same_night"] >= 0.99
    assert report["hosts"]["build-date-lastmod"]["max_delay_days"] <= RevisitPolicy().max_staleness
    true, observed = report["miss_rate_true"], report["miss_rate_observed"]
    assert true / 2 <= observed <= true * 2


def test_in_the_simulation_a_lying_etag_is_caught_and_no_longer_hides_changes():
    report = simulate(900, 30, 1, RevisitPolicy(), lying_etag=True)
    lying, right = report["hosts"]["lying-etag"], report["hosts"]["right-lastmod"]
    assert lying["etag"]["state"] == "distrusted" and lying["etag_distrusted_after_night"] <= 15
    assert lying["max_delay_days"] <= RevisitPolicy().max_staleness
    assert right["etag"]["state"] == "trusted" and right["changes_hidden_by_304"] == 0 and right["same_night"] >= 0.99

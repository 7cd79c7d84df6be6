import pytest

from crawler.cache.lock import CacheLock, CacheLockedError, FileLock, LockHeldError, held_elsewhere


def test_a_held_lock_names_its_holder(tmp_path):
    first = FileLock(tmp_path / "x.lock")
    first.acquire("pid 42, started today")
    assert first.held and held_elsewhere(tmp_path / "x.lock")
    with pytest.raises(LockHeldError) as refused:
        FileLock(tmp_path / "x.lock").acquire()  # another open file: refused as another process is
    assert refused.value.holder == "pid 42, started today"
    first.release()
    assert not held_elsewhere(tmp_path / "x.lock")
    again = FileLock(tmp_path / "x.lock")
    again.acquire()
    again.release()


def test_the_cache_lock_says_what_to_do(tmp_path):
    held = CacheLock(tmp_path)
    held.acquire()
    with pytest.raises(CacheLockedError, match=r"in use by another crawl \(pid \d+\); wait for it"):
        CacheLock(tmp_path).acquire()
    assert CacheLock(tmp_path).is_locked_elsewhere()
    held.release()
    assert not CacheLock(tmp_path).is_locked_elsewhere()
    assert not held_elsewhere(tmp_path / "missing.lock")

"""The extraction stage's spool of answers the store refused (crawler/stages/spool.py)."""

from __future__ import annotations

import stat

from crawler.stages.spool import Spool


def test_kept_loaded_and_dropped(tmp_path):
    spool = Spool(tmp_path / "cache")
    path = spool.keep("abc", {"input_key": "k", "data": {"a": 1}})
    assert path == tmp_path / "cache" / "pending-extractions" / "abc.json"
    assert stat.S_IMODE(path.parent.stat().st_mode) & 0o077 == 0 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert spool.load() == {"abc": {"input_key": "k", "data": {"a": 1}}}
    spool.drop("abc")
    assert spool.load() == {}


def test_beside_the_cache_directory_when_it_cannot_take_the_folder(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "pending-extractions").write_text("not a folder")  # mkdir fails as in an unwritable directory
    spool = Spool(cache)
    path = spool.keep("abc", {"input_key": "k"})
    assert path == tmp_path / "cache.pending-extractions" / "abc.json"
    assert spool.load() == {"abc": {"input_key": "k"}}
    spool.drop("abc")
    assert spool.load() == {}


def test_an_unreadable_file_is_skipped_with_a_warning(tmp_path, caplog):
    spool = Spool(tmp_path)
    spool.keep("good", {"input_key": "k"})
    (tmp_path / "pending-extractions" / "bad.json").write_text("{half")
    assert spool.load() == {"good": {"input_key": "k"}}
    assert "Unreadable pending extraction" in caplog.text


def test_nowhere_to_keep_it(tmp_path):
    (tmp_path / "file").write_text("")
    assert Spool(tmp_path / "file" / "cache").keep("abc", {}) is None

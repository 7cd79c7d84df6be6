import hashlib

from hypothesis import given
from hypothesis import strategies as st

from crawler.lib.keyset import FixedKeySet, FixedKeyValues


@given(st.lists(st.binary(max_size=5), max_size=300))
def test_holds_what_a_set_holds(keys):
    # small buckets and widths that meet: keys found across two keys' bytes, splits
    compact, plain = FixedKeySet(buckets=2), set()
    for key in keys:
        assert compact.add(key) == (key not in plain)
        plain.add(key)
        assert key in compact
    assert len(compact) == len(plain)
    assert sorted(compact) == sorted(plain)
    for key in keys:
        for other in (key[1:] + key[:1], key[::-1], key + b"\0"):
            assert (other in compact) == (other in plain)


def test_a_match_across_two_keys_is_not_a_key():
    keys = FixedKeySet([b"abcd", b"efgh"], buckets=1)
    assert b"cdef" not in keys
    assert keys.add(b"cdef")
    assert b"cdef" in keys


def test_fingerprints_take_a_fraction_of_a_set():
    import tracemalloc

    fingerprints = [hashlib.sha1(str(n).encode()).digest() for n in range(50_000)]
    tracemalloc.start()
    try:
        keys = FixedKeySet(fingerprints)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(keys) == 50_000 and all(fp in keys for fp in fingerprints[::97])
    assert held < 32 * 50_000  # a set of the same bytes objects: about 105 bytes a key


@given(st.lists(st.tuples(st.binary(min_size=3, max_size=3), st.integers(0, 70_000)), max_size=300))
def test_values_as_a_dict_holds_them(items):
    compact, plain = FixedKeyValues(3, buckets=2), {}
    for key, value in items:
        compact.set(key, value)
        plain[key] = min(value, 65_535)
        assert compact.get(key) == plain[key]
        assert compact.get(key[1:] + key[:1]) == plain.get(key[1:] + key[:1])
    assert len(compact) == len(plain)
    assert all(compact.get(key) == value for key, value in plain.items())

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from crawler.cache.runkeys import RunKeys, SeenPages

#: page keys (40 hex digits), and others: a test's names, upper case, 40 non-hex letters
KEYS = [hashlib.sha1(str(n).encode()).hexdigest() for n in range(6)] + ["k1", "A" * 40, "g" * 40, "0" * 40]
operations = st.lists(
    st.tuples(st.sampled_from(["put", "pop", "get"]), st.sampled_from(KEYS), st.sampled_from(["new", "changed", None])),
    max_size=60,
)


@given(operations)
def test_seen_pages_as_a_dict_holds_them(steps):
    seen, plain = SeenPages(), {}
    for op, key, status in steps:
        if op == "put":
            seen[key] = status
            plain[key] = status
        elif op == "pop":
            assert seen.pop(key, "none") == plain.pop(key, "none")
        assert (key in seen) == (key in plain)
        assert seen.get(key, "none") == plain.get(key, "none")
        assert list(seen.items()) == list(plain.items())  # in the order first put
        assert len(seen) == len(plain)
    assert seen == plain
    seen.clear()
    assert not seen and list(seen) == []


@given(st.lists(st.sampled_from(KEYS)))
def test_run_keys_as_a_set_holds_them(keys):
    held = RunKeys()
    for key in keys:
        held.add(key)
        assert key in held
    assert len(held) == len(set(keys))
    assert all((key in held) == (key in keys) for key in KEYS)

"""How the stores write values (crawler/cache/codecs.py): the text of the embedded
store's JSON files is ``json.dumps``'s, whatever the value, written faster."""

from __future__ import annotations

import enum
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.cache.codecs import json_encode, json_file_text


def reference(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def outcome(encode: Any, value: Any) -> tuple[str, str]:
    """What ``encode(value)`` gives: ("text", it), or the error it raises."""
    try:
        return "text", encode(value)
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return type(exc).__name__, str(exc)


class Level(enum.IntEnum):
    LOW = 1


class Name(str):
    pass


scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats()  # NaN and infinities too: json.dumps writes them (NaN, Infinity)
    | st.text()  # any code point: control characters, quotes, U+2028, lone surrogates
    | st.sampled_from([Level.LOW, Name("sub"), True, 0.0, -0.0, 1e16, 1e-7])
)
keys = st.text() | st.sampled_from([1, 2.5, True, None, Name("k")])  # not str: json.dumps's to convert or refuse
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children)
        | st.lists(children).map(tuple)
        | st.dictionaries(st.text(), children)
        | st.dictionaries(keys, children, max_size=4)
    ),
    max_leaves=40,
)


@settings(max_examples=500)
@given(values)
def test_a_json_file_is_the_text_json_dumps_writes(value):
    assert outcome(json_file_text, value) == outcome(reference, value)


def test_a_json_file_of_values_json_dumps_refuses_or_nests_deeply():
    looped: list[Any] = []
    looped.append(looped)
    deep: Any = "leaf"
    for _ in range(150):
        deep = {"a": [deep]}
    for value in (looped, {"a": {1, 2}}, {"a": b"bytes"}, {1: "x", "b": "y"}, deep, {"t": (1, [], {}, ())}):
        assert outcome(json_file_text, value) == outcome(reference, value)


@given(values)
def test_compact_json_is_the_text_json_dumps_writes(value):
    def compact(v: Any) -> str:
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"), default=str)

    assert outcome(json_encode, value) == outcome(compact, value)

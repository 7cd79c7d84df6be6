"""JSON Schema for LLM answers: full draft 2020-12 validation by ``jsonschema``.

Every keyword a user's ``LLM_SCHEMA`` may hold is enforced (``pattern``,
``minLength``, ``minimum``, ``oneOf``, ``allOf``, ``$ref``...), and ``format`` too
(``email``, ``date``, ``uri``... as far as ``jsonschema``'s format checker knows them).
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError


def _path(parts: Any) -> str:
    """``$.a[0].b`` for the path ``["a", 0, "b"]``."""
    text = "$"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def _validator(schema: dict[str, Any]) -> Draft202012Validator:
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def schema_errors(value: Any, schema: dict[str, Any]) -> list[str]:
    """What is wrong with ``value`` under ``schema`` (empty: it conforms), one line per
    error with the JSON path of the value at fault, in document order.

    >>> s = {"type": "object", "required": ["a"], "additionalProperties": False,
    ...      "properties": {"a": {"type": "array", "items": {"type": "string", "minLength": 2}}}}
    >>> schema_errors({"a": ["xy"]}, s)
    []
    >>> schema_errors({"a": [1, "x"], "b": 2}, s)  # doctest: +NORMALIZE_WHITESPACE
    ["$: Additional properties are not allowed ('b' was unexpected)",
     "$.a[0]: 1 is not of type 'string'", "$.a[1]: 'x' is too short"]
    """
    errors = sorted(_validator(schema).iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{_path(error.absolute_path)}: {error.message}" for error in errors]


def check_schema(schema: Any) -> None:
    """Raise ``ValueError`` naming where ``schema`` is not a valid draft 2020-12 schema.

    >>> check_schema({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
    >>> check_schema({"type": "object", "properties": 3})
    Traceback (most recent call last):
    ...
    ValueError: $.properties: 3 is not of type 'object'
    """
    if not isinstance(schema, dict):
        raise ValueError("$ must be a schema (an object)")
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise ValueError(f"{_path(exc.absolute_path)}: {exc.message}") from None

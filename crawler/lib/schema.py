"""A JSON Schema check for LLM answers: the keywords structured-output schemas use.

Covers ``type`` (one or a list), ``enum``, ``const``, ``properties``, ``required``,
``additionalProperties`` (false or a schema), ``items``, ``minItems``/``maxItems``,
``anyOf`` and local ``$ref`` to ``#/$defs/...``; other keywords are ignored, so an
answer is never rejected for a rule this check does not know.
"""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}


def _is_type(value: Any, name: str) -> bool:
    if name in ("number", "integer") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(name, (object,)))


def schema_errors(
    value: Any, schema: dict[str, Any], *, root: dict[str, Any] | None = None, path: str = "$"
) -> list[str]:
    """What is wrong with ``value`` under ``schema`` (empty: it conforms).

    >>> s = {"type": "object", "required": ["a"], "additionalProperties": False,
    ...      "properties": {"a": {"type": "array", "items": {"type": "string"}}}}
    >>> schema_errors({"a": ["x"]}, s)
    []
    >>> schema_errors({"a": [1], "b": 2}, s)
    ['$.a[0]: expected string, got int', '$: unexpected property b']
    >>> schema_errors([], s)
    ['$: expected object, got list']
    """
    root = root if root is not None else schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        schema = target if isinstance(target, dict) else {}
    errors: list[str] = []
    expected = schema.get("type")
    if expected is not None:
        names = expected if isinstance(expected, list) else [expected]
        if not any(_is_type(value, n) for n in names):
            return [f"{path}: expected {' or '.join(names)}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} is not one of {schema['enum']!r}")
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: expected {schema['const']!r}")
    if "anyOf" in schema and not any(not schema_errors(value, s, root=root, path=path) for s in schema["anyOf"]):
        errors.append(f"{path}: matches none of anyOf")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        errors.extend(f"{path}: missing property {name}" for name in schema.get("required", []) if name not in value)
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            if name in properties:
                errors.extend(schema_errors(item, properties[name], root=root, path=f"{path}.{name}"))
            elif extra is False:
                errors.append(f"{path}: unexpected property {name}")
            elif isinstance(extra, dict):
                errors.extend(schema_errors(item, extra, root=root, path=f"{path}.{name}"))
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{path}: more than {schema['maxItems']} items")
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(value):
                errors.extend(schema_errors(item, items, root=root, path=f"{path}[{index}]"))
    return errors


def check_schema(schema: Any, path: str = "$") -> None:
    """Raise ``ValueError`` where ``schema`` misuses a keyword this check reads.

    >>> check_schema({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
    >>> check_schema({"type": "object", "properties": 3})
    Traceback (most recent call last):
    ...
    ValueError: $.properties must be an object of schemas
    """
    if not isinstance(schema, dict):
        raise ValueError(f"{path} must be a schema (an object)")
    kinds = schema.get("type")
    if kinds is not None:
        names = kinds if isinstance(kinds, list) else [kinds]
        unknown = [n for n in names if n not in _TYPES]
        if unknown:
            raise ValueError(f"{path}.type has unknown types {unknown!r}")
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        raise ValueError(f"{path}.properties must be an object of schemas")
    for name, sub in properties.items():
        check_schema(sub, f"{path}.properties.{name}")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(n, str) for n in required):
        raise ValueError(f"{path}.required must be a list of property names")
    for keyword in ("items", "additionalProperties"):
        sub = schema.get(keyword)
        if sub is not None and not isinstance(sub, bool | dict):
            raise ValueError(f"{path}.{keyword} must be a schema")
        if isinstance(sub, dict):
            check_schema(sub, f"{path}.{keyword}")
    if "enum" in schema and not isinstance(schema["enum"], list):
        raise ValueError(f"{path}.enum must be a list")
    if "anyOf" in schema:
        if not isinstance(schema["anyOf"], list):
            raise ValueError(f"{path}.anyOf must be a list of schemas")
        for index, sub in enumerate(schema["anyOf"]):
            check_schema(sub, f"{path}.anyOf[{index}]")

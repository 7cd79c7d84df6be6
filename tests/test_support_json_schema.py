import pytest

from crawler.support.json_schema import check_schema, schema_errors

SCHEMA = {
    "type": "object",
    "$defs": {"slug": {"type": "string", "pattern": "^[a-z-]+$"}},
    "properties": {
        "title": {"type": "string", "minLength": 3, "maxLength": 40},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "email": {"type": "string", "format": "email"},
        "published": {"type": "string", "format": "date"},
        "kind": {"oneOf": [{"const": "guide"}, {"const": "reference"}]},
        "tags": {"type": "array", "items": {"$ref": "#/$defs/slug"}, "uniqueItems": True},
        "both": {"allOf": [{"type": "integer"}, {"multipleOf": 5}]},
    },
    "required": ["title"],
}


def test_a_conforming_answer():
    answer = {
        "title": "Install",
        "score": 0.5,
        "email": "a@example.com",
        "published": "2026-11-24",
        "kind": "guide",
        "tags": ["setup", "linux"],
        "both": 10,
    }
    assert schema_errors(answer, SCHEMA) == []


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("title", "ab", "'ab' is too short"),
        ("score", 1.5, "1.5 is greater than the maximum of 1"),
        ("email", "not an address", "'not an address' is not a 'email'"),
        ("published", "24/11/2026", "'24/11/2026' is not a 'date'"),
        ("kind", "blog", "'blog' is not valid under any of the given schemas"),
        ("tags", ["Bad Slug"], "'Bad Slug' does not match '^[a-z-]+$'"),
        ("both", 7, "7 is not a multiple of 5"),
    ],
)
def test_every_keyword_is_enforced(field, value, message):
    errors = schema_errors({"title": "Install", field: value}, SCHEMA)
    assert len(errors) == 1 and errors[0].endswith(message), errors
    assert errors[0].startswith(f"$.{field}")


def test_a_missing_required_property():
    assert schema_errors({}, SCHEMA) == ["$: 'title' is a required property"]


def test_invalid_schemas_are_named():
    with pytest.raises(ValueError, match=r"^\$.properties.title.minLength: -1 is less than the minimum of 0"):
        check_schema({"type": "object", "properties": {"title": {"type": "string", "minLength": -1}}})
    with pytest.raises(ValueError, match="must be a schema"):
        check_schema([])

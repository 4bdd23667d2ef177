"""The JSON Schema subset: what an answer may break, and schemas that rely on unsupported rules."""

import pytest

from voice.llm.schema import check_schema, validate

SCORE = {
    "type": "object",
    "properties": {
        "score": {"type": ["integer", "null"], "enum": [1, 2, 3, 4, 5, None]},
        "reason": {"type": "string", "minLength": 1},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
    },
    "required": ["score", "reason"],
    "additionalProperties": False,
}


def test_a_valid_instance_has_no_problems():
    check_schema(SCORE)
    assert validate({"score": 4, "reason": "ok"}, SCORE) == []
    assert validate({"score": None, "reason": "no reply"}, SCORE) == []
    assert validate({"score": 4.0, "reason": "ok", "tags": ["a"]}, SCORE) == []  # 4.0 is an integer in JSON


def test_every_problem_is_reported_with_its_path():
    problems = validate({"score": 7, "extra": 1, "tags": ["a", 2, "c"]}, SCORE)
    assert "$.reason: missing" in problems
    assert "$.extra: not allowed" in problems
    assert "$.score: 7 is not one of [1, 2, 3, 4, 5, None]" in problems
    assert "$.tags: more than 2 items" in problems
    assert "$.tags[1]: expected string, got integer" in problems


@pytest.mark.parametrize(
    ("value", "schema", "problem"),
    [
        (True, {"type": "integer"}, "$: expected integer, got boolean"),
        (2.5, {"type": "integer"}, "$: expected integer, got number"),
        ("", {"type": "string", "minLength": 1}, "$: shorter than 1 characters"),
        (0, {"type": "number", "minimum": 1}, "$: 0 is below 1"),
        (6, {"type": "number", "maximum": 5}, "$: 6 is above 5"),
        ([], {"type": "array", "minItems": 1}, "$: fewer than 1 items"),
        (True, {"enum": [1]}, "$: True is not one of [1]"),
        ("b", {"const": "a"}, "$: must be 'a'"),
        (3, {"anyOf": [{"type": "string"}, {"type": "null"}]}, "$: matches none of the allowed forms"),
        ({"a": 1}, {"type": "array"}, "$: expected array, got object"),
    ],
)
def test_each_rule(value, schema, problem):
    check_schema(schema)
    assert validate(value, schema) == [problem]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "patternProperties": {}},
        {"type": "object", "properties": {"a": {"type": "string", "format": "email"}}},
        {"type": "array", "items": {"type": "tuple"}},
        {"type": "object", "additionalProperties": {"type": "string"}},
        "not a schema",
    ],
)
def test_a_schema_outside_the_subset_is_refused(schema):
    with pytest.raises(ValueError):
        check_schema(schema)


def test_the_typed_schema_names_every_supported_keyword() -> None:
    from voice.llm.schema import KEYWORDS, JsonSchema

    assert set(JsonSchema.__annotations__) == KEYWORDS

"""A small JSON Schema validator for the subset that structured-output servers accept.

LLM answers are checked against the same schema the server was asked to follow, because many servers
(JSON mode, older builds, small models) do not enforce it.  The subset is what OpenAI's strict structured
outputs, vLLM, llama.cpp and Ollama all understand: ``type`` (one or a list), ``properties``, ``required``,
``additionalProperties``, ``items``, ``enum``, ``const``, ``anyOf``, ``minItems``/``maxItems``,
``minimum``/``maximum``, ``minLength``/``maxLength``, plus the annotations ``title`` and ``description``.
Any other keyword is refused by :func:`check_schema`, so a schema never silently relies on a rule this
validator would skip.  (The ``jsonschema`` package would do the same with one more dependency.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

JsonScalar = str | int | float | bool | None


class JsonSchema(TypedDict, total=False):
    """A schema in the supported subset: each keyword :data:`KEYWORDS` names, with its JSON type."""

    type: str | list[str]
    properties: dict[str, JsonSchema]
    required: list[str]
    additionalProperties: bool
    items: JsonSchema
    enum: Sequence[JsonScalar]
    const: JsonScalar
    anyOf: list[JsonSchema]
    minItems: int
    maxItems: int
    minimum: float
    maximum: float
    minLength: int
    maxLength: int
    title: str
    description: str


KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "title",
        "description",
    }
)
TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})


def check_schema(schema: JsonSchema, at: str = "$") -> None:
    """Raise ``ValueError`` if ``schema`` uses a keyword or type outside the supported subset."""
    if not isinstance(schema, Mapping):
        raise ValueError(f"{at}: a schema must be an object, got {schema!r}")
    unknown = set(schema) - KEYWORDS
    if unknown:
        raise ValueError(f"{at}: unsupported schema keywords {sorted(unknown)}")
    types = schema.get("type", [])
    for t in [types] if isinstance(types, str) else types:
        if t not in TYPES:
            raise ValueError(f"{at}: unknown type {t!r}")
    for name, sub in schema.get("properties", {}).items():
        check_schema(sub, f"{at}.{name}")
    if "items" in schema:
        check_schema(schema["items"], f"{at}[]")
    for i, sub in enumerate(schema.get("anyOf", [])):
        check_schema(sub, f"{at}.anyOf[{i}]")
    extra = schema.get("additionalProperties", False)
    if not isinstance(extra, bool):
        raise ValueError(f"{at}: additionalProperties must be true or false here")


def validate(instance: Any, schema: JsonSchema, at: str = "$") -> list[str]:
    """Every way ``instance`` breaks ``schema``, as ``path: problem`` strings (empty when it is valid)."""
    problems: list[str] = []
    types = schema.get("type")
    if types is not None:
        allowed = [types] if isinstance(types, str) else list(types)
        if not any(_is_type(instance, t) for t in allowed):
            return [f"{at}: expected {' or '.join(allowed)}, got {_json_type(instance)}"]
    if "enum" in schema and not any(_same(instance, v) for v in schema["enum"]):
        problems.append(f"{at}: {instance!r} is not one of {schema['enum']!r}")
    if "const" in schema and not _same(instance, schema["const"]):
        problems.append(f"{at}: must be {schema['const']!r}")
    if "anyOf" in schema and not any(not validate(instance, s, at) for s in schema["anyOf"]):
        problems.append(f"{at}: matches none of the allowed forms")
    if isinstance(instance, Mapping):
        problems += _validate_object(instance, schema, at)
    elif isinstance(instance, list):
        problems += _validate_array(instance, schema, at)
    elif isinstance(instance, str):
        if len(instance) < schema.get("minLength", 0):
            problems.append(f"{at}: shorter than {schema['minLength']} characters")
        if "maxLength" in schema and len(instance) > schema["maxLength"]:
            problems.append(f"{at}: longer than {schema['maxLength']} characters")
    elif _is_type(instance, "number"):
        if "minimum" in schema and instance < schema["minimum"]:
            problems.append(f"{at}: {instance} is below {schema['minimum']}")
        if "maximum" in schema and instance > schema["maximum"]:
            problems.append(f"{at}: {instance} is above {schema['maximum']}")
    return problems


def _validate_object(instance: Mapping[str, Any], schema: JsonSchema, at: str) -> list[str]:
    problems = [f"{at}.{k}: missing" for k in schema.get("required", []) if k not in instance]
    properties = schema.get("properties", {})
    if schema.get("additionalProperties", True) is False:
        problems += [f"{at}.{k}: not allowed" for k in instance if k not in properties]
    for key, sub in properties.items():
        if key in instance:
            problems += validate(instance[key], sub, f"{at}.{key}")
    return problems


def _validate_array(instance: list[Any], schema: JsonSchema, at: str) -> list[str]:
    problems = []
    if len(instance) < schema.get("minItems", 0):
        problems.append(f"{at}: fewer than {schema['minItems']} items")
    if "maxItems" in schema and len(instance) > schema["maxItems"]:
        problems.append(f"{at}: more than {schema['maxItems']} items")
    if "items" in schema:
        for i, item in enumerate(instance):
            problems += validate(item, schema["items"], f"{at}[{i}]")
    return problems


def _is_type(value: Any, name: str) -> bool:
    if name == "integer":  # JSON has one number type: 3.0 is an integer, True is not
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    kinds: dict[str, type | tuple[type, ...]] = {
        "object": Mapping,
        "array": list,
        "string": str,
        "boolean": bool,
        "null": type(None),
    }
    return isinstance(value, kinds[name])


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``1 == 1.0`` but ``True != 1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


def _json_type(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _is_type(value, name):
            return name
    return type(value).__name__

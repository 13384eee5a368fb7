"""Validate a summary against runner/summary.schema.json, with the stdlib only.

Implements the part of JSON Schema (2020-12) that the schema file uses:
type (one or a list), enum, const, required, properties,
additionalProperties (false or a schema), items, minimum, pattern, and local $ref
("#/$defs/NAME"). Keywords it does not know are ignored ("format",
"description"), as a validator may. A stricter check in CI can use any
full JSON Schema validator on the same file.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .results import SCHEMA_FILE

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def load(path: str | Path = SCHEMA_FILE) -> dict:
    return json.loads(Path(path).read_text())


def errors(value: Any, schema: dict | None = None, *, root: dict | None = None,
           where: str = "$") -> list[str]:
    """Every way @value breaks @schema (empty: valid)."""
    if schema is None:
        schema = load()
    root = root or schema
    if "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            return [f"{where}: unsupported $ref {ref}"]
        target: Any = root
        for part in ref[2:].split("/"):
            target = target[part]
        return errors(value, target, root=root, where=where)
    out: list[str] = []
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[t](value) for t in types):
            return [f"{where}: {value!r:.60} is not of type {' or '.join(types)}"]
    if "const" in schema and value != schema["const"]:
        out.append(f"{where}: {value!r:.60} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: {value!r:.60} is not one of {schema['enum']}")
    if "minimum" in schema and _TYPES["number"](value) and value < schema["minimum"]:
        out.append(f"{where}: {value} is below {schema['minimum']}")
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        out.append(f"{where}: {value!r:.60} does not match {schema['pattern']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                out.append(f"{where}: required key {key!r} missing")
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                out += errors(item, props[key], root=root, where=f"{where}.{key}")
            elif extra is False:
                out.append(f"{where}: key {key!r} is not in the schema")
            elif isinstance(extra, dict):
                out += errors(item, extra, root=root, where=f"{where}.{key}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            out += errors(item, schema["items"], root=root, where=f"{where}[{i}]")
    return out

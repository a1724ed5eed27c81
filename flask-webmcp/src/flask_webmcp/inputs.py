"""Reading a tool's input from any request shape and loading it with the tool's schema.

A browser form (query string or form body), htmx, the JS bridge and a JSON client all send the
same fields; this module turns each into one dict and validates it with the marshmallow
schema, so every caller meets the same rules. Where the input keeps the types its client gave
(an MCP call's arguments, whose schema says "integer"), a value must also be of the JSON type
its field takes (`json_type`): "2" and 2.5 are no page number there, though a form's "2" is.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from flask import request
from marshmallow import Schema
from marshmallow import ValidationError
from marshmallow import fields
from werkzeug.datastructures import CombinedMultiDict
from werkzeug.datastructures import FileStorage

from .csrf import csrf_field
from .text import _

Errors = dict[str, list[str]]


class InputError(Exception):
    """The request body or query could not be read as tool input."""

    def __init__(self, errors: Errors):
        super().__init__("invalid input")
        self.errors = errors


def flatten_messages(messages: Any, prefix: str = "") -> Errors:
    """marshmallow's nested messages as field -> list of sentences."""
    if isinstance(messages, Mapping):
        flat: Errors = {}
        for key, value in messages.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            for field, texts in flatten_messages(value, name).items():
                flat.setdefault(field, []).extend(texts)
        return flat
    if isinstance(messages, list | tuple):
        return {prefix or "_schema": [str(m) for m in messages]}
    return {prefix or "_schema": [str(messages)]}


def read_input() -> dict[str, Any]:
    """The submitted fields: query string for GET, JSON or form body otherwise, a multipart
    form's files included (see `input_fields`)."""
    if request.method in ("GET", "HEAD"):
        return input_fields(request.args)
    if request.is_json:
        try:
            body = request.get_json(silent=True)
        except RecursionError:  # nested deeper than the parser goes: not an object either
            body = None
        if not isinstance(body, dict):
            raise InputError({"_schema": [_("The body must be a JSON object.")]})
        return input_fields(body)
    if request.files:
        # A multipart form's files are fields too, each as Werkzeug's FileStorage.
        return input_fields(CombinedMultiDict([request.form, request.files]))
    return input_fields(request.form)


def input_fields(source: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a query string, a form, a JSON object or an MCP call's arguments.

    Blank values and nulls mean "not given" (a form submits every field, a JSON client only
    the ones it cares about, and both must mean the same thing). The CSRF field is not input.
    """
    csrf = csrf_field()
    data: dict[str, Any] = {}
    errors: Errors = {}
    for key in source:
        if csrf is not None and key == csrf.name:
            continue
        if hasattr(source, "getlist") and len(source.getlist(key)) > 1:
            errors[key] = [_("Give a single value.")]
            continue
        value = source[key]
        if isinstance(value, str):
            value = value.strip()
        if value is None or value == "" or (isinstance(value, FileStorage)
                                            and not value.filename):
            continue  # (a file control left empty sends a file without a name)
        data[key] = value
    if errors:
        raise InputError(errors)
    return data


@functools.cache
def schema_instance(schema: type[Schema]) -> Schema:
    """One instance per schema class, reused by every request of the process.

    Building a marshmallow schema deep-copies all its fields (a good part of a search's
    time); loading with it changes nothing in it, so one instance serves every request.
    """
    return schema()


def json_type(field: fields.Field[Any]) -> str | None:
    """The JSON type a field's value has in typed input: "integer", "number" or "boolean";
    None for the rest (text, dates, choices: marshmallow refuses what is not a string)."""
    if isinstance(field, fields.Boolean):
        return "boolean"
    if isinstance(field, fields.Integer):
        return "integer"
    if isinstance(field, fields.Number):
        return "number"
    return None


def _is_of_type(value: Any, kind: str) -> bool:
    if isinstance(value, bool):  # a bool is an int to Python, never a number to JSON
        return kind == "boolean"
    if kind == "integer":  # JSON Schema counts 2.0 as an integer
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return kind == "number" and isinstance(value, int | float)


def type_errors(schema: Schema, data: Mapping[str, Any]) -> Errors:
    """The fields of typed input whose value is not of the JSON type the field takes, each
    with the field's own "invalid" message."""
    errors: Errors = {}
    for name, field in schema.load_fields.items():
        key = field.data_key or name
        kind = json_type(field)
        if kind is not None and key in data and not _is_of_type(data[key], kind):
            errors[key] = [str(field.error_messages["invalid"])]
    return errors


def load_input(schema: type[Schema], data: Mapping[str, Any],
               bound: Mapping[str, Any] | None = None, *, typed: bool = False
               ) -> dict[str, Any]:
    """Validate `data` (plus values bound by the URL) with `schema`; InputError lists problems.

    `typed`: the values keep the JSON types their client gave (an MCP call), so a number
    field refuses a string and an integer field a fraction (see `json_type`).
    """
    given = dict(data)
    for name in bound or {}:
        if name in given:
            raise InputError({name: [_("This value is set by the page address.")]})
    if typed and (errors := type_errors(schema_instance(schema), given)):
        raise InputError(errors)
    given.update(bound or {})
    try:
        loaded: dict[str, Any] = schema_instance(schema).load(given)
        return loaded
    except ValidationError as error:
        raise InputError(flatten_messages(error.messages)) from None

__all__ = ["Errors", "InputError", "flatten_messages", "input_fields", "json_type", "load_input",
           "read_input", "schema_instance"]

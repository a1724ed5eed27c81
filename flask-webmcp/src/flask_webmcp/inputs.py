"""Reading a tool's input from any request shape and loading it with the tool's schema.

A browser form (query string or form body), htmx, the JS bridge and a JSON client all send the
same fields; this module turns each into one dict and validates it with the marshmallow
schema, so every caller meets the same rules.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from flask import request
from marshmallow import Schema
from marshmallow import ValidationError

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
    """The submitted fields: query string for GET, JSON or form body otherwise (see
    `input_fields`)."""
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
        if value is None or value == "":
            continue
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


def load_input(schema: type[Schema], data: Mapping[str, Any],
               bound: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Validate `data` (plus values bound by the URL) with `schema`; InputError lists problems."""
    given = dict(data)
    for name in bound or {}:
        if name in given:
            raise InputError({name: [_("This value is set by the page address.")]})
    given.update(bound or {})
    try:
        loaded: dict[str, Any] = schema_instance(schema).load(given)
        return loaded
    except ValidationError as error:
        raise InputError(flatten_messages(error.messages)) from None

__all__ = ["Errors", "InputError", "flatten_messages", "input_fields", "load_input", "read_input",
           "schema_instance"]

"""The JSON Schema an agent is given for a tool's input, derived from its marshmallow schema.

    expected_input_schema(tool, ...)    what a WebMCP browser derives from the tool's form, as
                                        the form macros render it (the `Control`s of `forms`)
    remote_input_schema(tool)           what a client that is shown no page gets (MCP): every
                                        field an input, ids described by where they come from,
                                        numbers of the JSON type the server takes from it
                                        (`inputs.json_type`), no property the schema refuses

Each property is built by the same functions that `dev.schema` uses to read a rendered form
the way Chromium 156 does (`input_schema`, `choice_schema`, `describe`), so the two directions
disagree only when the rendered form and the schema do. This half needs no HTML parser: the
running site uses it for its MCP endpoint, the linter and the tests for the other half.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from marshmallow import RAISE

from .catalog import Tool
from .forms import Control
from .forms import agent_fields
from .forms import controls_for
from .forms import remote_controls
from .inputs import json_type
from .inputs import schema_instance

Schema = dict[str, Any]

DATE_SENTENCE = "Dates MUST be provided in 'YYYY-MM-DD' format."
TEXT_TYPES = frozenset({"text", "search", "tel", "email", "url", "password"})
NUMBER_TYPES = frozenset({"number", "range"})
HTML_SPACE = " \t\n\f\r"

TIME = "([01][0-9]|2[0-3]):[0-5][0-9]"
SECONDS = "(:[0-5][0-9])?"
FRACTION = "(:[0-5][0-9](\\.[0-9]{1,3})?)?"
DAY = "[0-9]{4}-(0[1-9]|1[0-2])-[0-9]{2}T"
FIXED_FORMATS = {
    "month": "^[0-9]{4}-(0[1-9]|1[0-2])$",
    "week": "^[0-9]{4}-W(0[1-9]|[1-4][0-9]|5[0-3])$",
    "color": "^#[0-9a-zA-Z]{6}$",
}
# HTML's "valid floating-point number" (no "+", no "5.", no surrounding space).
FLOAT = re.compile(r"-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


# -- one property, whichever side it is read from


def parse_number(text: str | None) -> Decimal | None:
    """An HTML number attribute (min, max, step, value), or None when it is not valid."""
    if text is None or not FLOAT.fullmatch(text):
        return None
    number = Decimal(text)
    return number if abs(float(number)) != float("inf") else None


def _json_number(number: Decimal) -> int | float:
    return int(number) if number == number.to_integral_value() else float(number)


def number_schema(input_type: str, attrs: Mapping[str, Any]) -> Schema:
    """number/range: bounds from min/max (range: 0/100 by default) and `multipleOf` = step
    when the step base (min, else value, else 0) is a multiple of the step."""
    is_range = input_type == "range"
    minimum = parse_number(attrs.get("min"))
    maximum = parse_number(attrs.get("max"))
    if is_range:
        minimum = Decimal(0) if minimum is None else minimum
        maximum = Decimal(100) if maximum is None else maximum
        maximum = max(maximum, minimum)
    step_text = str(attrs.get("step", "")).strip().lower()
    step = parse_number(attrs.get("step"))
    if step_text == "any" and not is_range:
        step = None  # a range ignores "any" and keeps its default step
    elif step is None or step <= 0:
        step = Decimal(1)
    base = parse_number(attrs.get("min"))
    if base is None:
        base = parse_number(attrs.get("value")) or Decimal(0)
    schema: Schema = {"type": "number"}
    if minimum is not None:
        schema["minimum"] = _json_number(minimum)
    if maximum is not None:
        schema["maximum"] = _json_number(maximum)
    if step is not None and base % step == 0:
        schema["multipleOf"] = _json_number(step)
    return schema


def temporal_schema(input_type: str, attrs: Mapping[str, Any]) -> Schema:
    """date: `format: date`; time, datetime-local, month, week, color: a regex in `format`."""
    if input_type == "date":
        return {"type": "string", "format": "date"}
    if input_type in FIXED_FORMATS:
        return {"type": "string", "format": FIXED_FORMATS[input_type]}
    step = parse_number(attrs.get("step"))
    if step is None or step <= 0:
        step = Decimal(60)
    clock = TIME + (FRACTION if step < 1 else SECONDS if step < 60 else "")
    day = DAY if input_type == "datetime-local" else ""
    return {"type": "string", "format": f"^{day}{clock}$"}


def input_schema(input_type: str, attrs: Mapping[str, Any]) -> Schema | None:
    """The schema of one <input> of `input_type`, or None when agents are not offered it."""
    if input_type in TEXT_TYPES:
        # Passed on as declared: Chromium drops a pattern that does not compile with the `v`
        # flag, and whether one does is checked during development (`dev.patterns`, WMCP015).
        pattern = attrs.get("pattern")
        return {"type": "string"} if pattern is None else {"type": "string", "pattern": pattern}
    if input_type in NUMBER_TYPES:
        return number_schema(input_type, attrs)
    if input_type in ("date", "time", "datetime-local") or input_type in FIXED_FORMATS:
        return temporal_schema(input_type, attrs)
    if input_type == "checkbox":
        return {"type": "boolean"}
    if input_type == "hidden" and attrs.get("toolparamdescription"):
        return {"type": "string"}  # only a described hidden input; CSRF tokens stay unseen
    return None  # file, buttons, undescribed hidden inputs


def choice_schema(options: Iterable[tuple[str, str | None]], multiple: bool = False) -> Schema:
    """A select, a radio group or a checkbox group: `anyOf` of titled constants plus `enum`."""
    options = list(options)
    choices = [{"type": "string", "const": value} | ({"title": title} if title is not None
                                                       else {})
               for value, title in options]
    schema: Schema = {"type": "string", "anyOf": choices, "enum": [v for v, _ in options]}
    return {"type": "array", "items": schema, "uniqueItems": True} if multiple else schema


def resolve_description(tool_param: str | None, labels: Sequence[str] = (),
                        aria: str | None = None) -> str | None:
    """toolparamdescription, else the labels' text (each trimmed, joined with "; "), else
    aria-description; empty values count as absent."""
    if tool_param:
        return tool_param
    label_text = "; ".join(label.strip(HTML_SPACE) for label in labels)
    return label_text or aria or None


def describe(schema: Schema, description: str | None, input_type: str | None = None
             ) -> Schema:
    """Add the description (a date also gets the sentence about its format)."""
    if input_type == "date":
        description = f"{description} ({DATE_SENTENCE})" if description else DATE_SENTENCE
    return schema | {"description": description} if description else schema


def object_schema(properties: Iterable[tuple[str, Schema, bool]]) -> Schema:
    """The tool's input: properties in order, `required` listing those marked required."""
    properties = list(properties)
    return {
        "type": "object",
        "properties": {name: schema for name, schema, _ in properties},
        "required": [name for name, _, required in properties if required],
    }


# -- from the catalog: the form the macros render for the tool's schema


def expected_input_schema(tool: Tool, choices: Mapping[str, Iterable[tuple[str, str]]]
                          | None = None, bound: Iterable[str] = ()) -> Schema:
    """The schema a WebMCP browser should derive from `tool`'s form.

    `choices` gives the options of choice fields filled by the page (e.g. the event ids a
    results list shows), `bound` the fields the page address carries (not controls).
    """
    properties = []
    for control in controls_for(tool.schema, choices=choices, bound=bound):
        schema = control_schema(control)
        if schema is not None:
            properties.append((control.name, schema, control.required))
    return object_schema(properties)


def control_schema(control: Control) -> Schema | None:
    """The property of one rendered `Control` (see `templates/webmcp/macros.html`)."""
    if control.kind == "select":
        options = [(option.value, option.label) for option in control.options]
        return describe(choice_schema(options), resolve_description(control.description,
                                                                    [control.label]))
    if control.kind == "radio":
        titles = [(option.value, option.label.strip(HTML_SPACE) or None)
                  for option in control.options]
        if len(titles) == 1:  # described like a single control: its own description, label
            return describe(choice_schema(titles),
                            resolve_description(control.description, [control.options[0].label]))
        return describe(choice_schema(titles), control.description)
    attrs = {**control.attrs, "value": control.value}
    if control.description:
        attrs["toolparamdescription"] = control.description
    schema = input_schema(control.input_type, attrs)
    if schema is None:
        return None
    return describe(schema, resolve_description(control.description, [control.label]),
                    control.input_type)


def remote_input_schema(tool: Tool) -> Schema:
    """The input schema of `tool` for a client that is shown no page (an MCP client).

    The form's fields keep the schema a WebMCP browser derives from them (enumerations where
    the form has a fixed list); an id that a page would offer as options or carry in its
    address becomes a string of its pattern, described by where such ids come from. Unlike a
    form, the call keeps its JSON types, and the server checks them: an integer field is an
    "integer" (a browser says "number" with a step of 1), and a schema that refuses unknown
    fields says `additionalProperties: false`.
    """
    declared = agent_fields(tool.schema)
    schema = object_schema((control.name, _as_taken(schema, json_type(declared[control.name])),
                            control.required)
                           for control in remote_controls(tool.schema)
                           if (schema := control_schema(control)) is not None)
    if schema_instance(tool.schema).unknown == RAISE:
        schema["additionalProperties"] = False
    return schema


def _as_taken(schema: Schema, kind: str | None) -> Schema:
    """A number control's property as the JSON type the server takes for its field."""
    if kind != "integer" or schema.get("type") != "number":
        return schema
    rest = {key: value for key, value in schema.items() if key != "type"}
    if rest.get("multipleOf") == 1:
        del rest["multipleOf"]  # "integer" says what a step of 1 said
    return {"type": "integer", **rest}

__all__ = ["DATE_SENTENCE", "expected_input_schema", "remote_input_schema"]

"""From a marshmallow schema to the form controls that present it.

Each schema field becomes one `Control`: the HTML control, its label, its agent description and
its constraints, all read from the field and its validators. The form macro renders controls and
`expected_input_schema` derives the agent's JSON Schema from the same controls, so the form,
the validator and the tool schema cannot drift apart.

Field metadata understood here (texts may be lazy translations: each is rendered with `str()`
when the form is built)::

    label           text of the <label> (people read it)
    description     toolparamdescription (agents read it)
    input_type      override of the <input type> (e.g. "search"; "textarea": a <textarea>)
    widget          "radio" for a radio group (choices may come from the page at render time)
    option_titles   for choices the page supplies: whose words their titles are (e.g.
                    "organizer-written event titles"); the description says so, since the
                    titles reach the agent's schema as written (linter rule WMCP017)
    id_source       for an id a page offers as options or carries in its address: where a
                    client that is shown no page (MCP) gets such ids; its description there
    empty_label     text of the "" option of an optional <select> (meaning "any")
    autocomplete, placeholder, inputmode, autocapitalize, spellcheck, enterkeyhint,
    autofocus, accept
                    passed through to the control

A field may also be *bound* to the page (e.g. the event a detail page shows): it then travels in
the form's action URL, not as a control, and the agent does not see it. A client that is shown
no page gets every field as an input (`remote_controls`).
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from datetime import date
from datetime import time
from typing import Any
from typing import TypeVar

from marshmallow import Schema
from marshmallow import fields
from marshmallow import validate

from .inputs import schema_instance
from .text import _

PASS_THROUGH = ("autocomplete", "placeholder", "inputmode", "autocapitalize", "spellcheck",
                "enterkeyhint", "autofocus", "accept")

Validator = TypeVar("Validator", bound=validate.Validator)


@dataclass(frozen=True)
class Option:
    """One choice of a select or radio group."""

    value: str
    label: str


@dataclass(frozen=True)
class Control:
    """How one schema field is shown in a form."""

    name: str
    kind: str  # "input", "select" or "radio"
    label: str
    input_type: str = "text"
    description: str | None = None
    required: bool = False
    attrs: dict[str, str] = field(default_factory=dict)
    options: tuple[Option, ...] = ()
    value: str = ""
    errors: tuple[str, ...] = ()


def _validators(field_obj: fields.Field[Any], kind: type[Validator]) -> list[Validator]:
    return [v for v in field_obj.validators if isinstance(v, kind)]


def _bound(value: Any) -> str:
    """A Range bound as the HTML attribute writes it: a number, or a date for date controls."""
    if isinstance(value, date | time):
        return value.isoformat()
    return str(int(value)) if float(value).is_integer() else str(value)


def _input_type(field_obj: fields.Field[Any]) -> str:
    if "input_type" in field_obj.metadata:
        return str(field_obj.metadata["input_type"])
    if isinstance(field_obj, fields.Email):
        return "email"
    if isinstance(field_obj, fields.Date):
        return "date"
    if isinstance(field_obj, (fields.Integer, fields.Float, fields.Decimal)):
        return "number"
    return "text"


def _constraints(field_obj: fields.Field[Any]) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for length in _validators(field_obj, validate.Length):
        if length.max is not None:
            attrs["maxlength"] = str(length.max)
        if length.min is not None:
            attrs["minlength"] = str(length.min)
    for bounds in _validators(field_obj, validate.Range):
        if bounds.min is not None:
            attrs["min"] = _bound(bounds.min)
        if bounds.max is not None:
            attrs["max"] = _bound(bounds.max)
    if isinstance(field_obj, fields.Integer):
        attrs["step"] = "1"
    for regexp in _validators(field_obj, validate.Regexp):
        if isinstance(regexp.regex.pattern, str):  # a bytes regex cannot check form text
            attrs["pattern"] = regexp.regex.pattern
    for key in PASS_THROUGH:
        if key in field_obj.metadata:
            attrs[key] = str(field_obj.metadata[key])
    return attrs


def _options(field_obj: fields.Field[Any], page_choices: Iterable[tuple[str, str]] | None,
             radio: bool) -> tuple[Option, ...]:
    if page_choices is not None:
        choices = [Option(str(value), str(label)) for value, label in page_choices]
    else:
        choices = []
        for one_of in _validators(field_obj, validate.OneOf):
            labels = list(one_of.labels) or [str(c) for c in one_of.choices]
            choices = [Option(str(c), str(lbl)) for c, lbl in zip(one_of.choices, labels,
                                                                   strict=True)]
    if not radio and not field_obj.required and choices:
        # An optional select offers "" = any; the loader treats "" as not given.
        choices.insert(0, Option("", str(field_obj.metadata.get("empty_label", _("Any")))))
    return tuple(choices)


def takes_page_choices(field_obj: fields.Field[Any]) -> bool:
    """True for a choice field whose options the page supplies (a radio group without a
    fixed vocabulary, e.g. the event ids a results list shows)."""
    return field_obj.metadata.get("widget") == "radio" and not _validators(field_obj,
                                                                           validate.OneOf)


def described(field_obj: fields.Field[Any]) -> str | None:
    """The agent's description of a field; for choices the page supplies, it also says whose
    words the option titles are."""
    meta = field_obj.metadata
    if "description" not in meta:
        return None
    description = str(meta["description"])
    if meta.get("option_titles"):
        return _("%(description)s (option titles are %(titles)s)") % {
            "description": description, "titles": str(meta["option_titles"])}
    return description


def _display(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, date | time):
        return value.isoformat()
    return str(value)


def control_for(name: str, field_obj: fields.Field[Any], value: Any = None,
                errors: Iterable[str] = (), page_choices: Iterable[tuple[str, str]] | None = None
                ) -> Control:
    """The control that presents `field_obj` (page-bound choices make it a choice control)."""
    meta = field_obj.metadata
    radio = meta.get("widget") == "radio"
    has_choices = page_choices is not None or bool(_validators(field_obj, validate.OneOf))
    kind = "radio" if radio else ("select" if has_choices else "input")
    return Control(
        name=name,
        kind=kind,
        label=str(meta.get("label", name.replace("_", " ").capitalize())),
        input_type=_input_type(field_obj) if kind == "input" else "text",
        description=described(field_obj),
        required=field_obj.required,
        attrs=_constraints(field_obj) if kind == "input" else {},
        options=_options(field_obj, page_choices, radio) if kind != "input" else (),
        value=_display(value),
        errors=tuple(errors),
    )


def agent_fields(schema: type[Schema] | Schema, bound: Iterable[str] = ()
                 ) -> dict[str, fields.Field[Any]]:
    """The fields an agent fills, in declaration order: all but those bound to the page."""
    instance = schema_instance(schema) if isinstance(schema, type) else schema
    bound = set(bound)
    return {name: f for name, f in instance.load_fields.items() if name not in bound}


def controls_for(schema: type[Schema] | Schema, values: Mapping[str, Any] | None = None,
                 errors: Mapping[str, Any] | None = None,
                 choices: Mapping[str, Iterable[tuple[str, str]]] | None = None,
                 bound: Iterable[str] = ()) -> list[Control]:
    """Every control of a tool form, in schema order, filled with values and field errors."""
    values = values or {}
    errors = errors or {}
    choices = choices or {}
    controls = []
    for name, field_obj in agent_fields(schema, bound).items():
        field_errors = errors.get(name, ())
        if isinstance(field_errors, str):
            field_errors = (field_errors,)
        controls.append(control_for(name, field_obj, values.get(name), field_errors,
                                    choices.get(name)))
    return controls


def remote_controls(schema: type[Schema] | Schema) -> list[Control]:
    """Every field of a tool as an input, for a client that is shown no page (MCP).

    A field with `id_source` (an id a page offers as options or carries in its address) is a
    text input of its pattern, described by where such ids come from; every other field is
    the control its form shows.
    """
    controls = []
    for name, field_obj in agent_fields(schema).items():
        source = field_obj.metadata.get("id_source")
        if source is None:
            controls.append(control_for(name, field_obj))
            continue
        controls.append(Control(name=name, kind="input", label=name, description=str(source),
                                required=field_obj.required, attrs=_constraints(field_obj)))
    return controls

def agent_at_work() -> str:
    """What a tool form says while the visitor's agent fills it in, in the request's language.

    Chromium matches such a form with `:tool-form-active`; a style sheet can show a sentence
    there but cannot translate one, so `tool_form` writes this on every tool form
    (`data-agent-at-work`), for the app's CSS to show with `content: attr(data-agent-at-work)`.
    """
    return _("Your agent is using this form")


__all__ = ["Control", "Option", "agent_at_work", "controls_for", "remote_controls"]

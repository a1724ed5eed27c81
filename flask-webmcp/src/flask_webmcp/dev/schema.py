"""The JSON Schema a WebMCP browser derives from a rendered tool form, read the way Chromium
156 reads it: `synthesize_input_schema(form)`.

The other side, `expected_input_schema(tool, ...)` from the tool's marshmallow schema, lives in
the runtime toolkit (`webmcp.input_schema`, re-exported here): both build each property with
the same functions (`input_schema`, `choice_schema`, `describe`), so they can disagree only
when the rendered form and the schema do. The rules are
Chromium's (docs/chromium.md §3), checked against Chromium 156 itself; where Chromium and a
written account of it differ, Chromium's behaviour is the one written here:

- controls are grouped by `name` after dropping disabled ones and read-only ones (where
  `readonly` applies); a name shared by anything but radios only or checkboxes only is left
  out, hidden inputs and buttons included; a control without `name` is keyed "";
- a radio or checkbox "group" of one member is described like a single control;
- label texts are trimmed one by one and joined with "; "; descriptions and patterns are
  otherwise taken verbatim.

Not modelled: which patterns Chromium drops because they do not compile with the `v` flag
(V8 says: `patterns.rejected_patterns`, which the linter asks for WMCP015); numbers beyond
double precision (Chromium rounds them, e.g. min="0.30000000000000004" gives 0.3);
whitespace-only text, which BeautifulSoup's html.parser collapses to one space before we see
it (an <option> of spaces); forms inside shadow roots; file inputs and form-associated custom
elements (both behind flags that are off in Chromium 156); markup that the HTML parser would
repair differently from the parser that built the tree.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import overload
from urllib.parse import urlsplit

from bs4 import BeautifulSoup
from bs4 import Tag
from bs4.element import NavigableString
from werkzeug.exceptions import HTTPException
from werkzeug.routing import Map

from ..catalog import TOOL_NAME_RE
from ..catalog import Tool
from ..forms import agent_fields
from ..forms import takes_page_choices
from ..input_schema import DATE_SENTENCE
from ..input_schema import HTML_SPACE
from ..input_schema import NUMBER_TYPES
from ..input_schema import TEXT_TYPES
from ..input_schema import Schema
from ..input_schema import choice_schema
from ..input_schema import describe
from ..input_schema import expected_input_schema
from ..input_schema import input_schema
from ..input_schema import object_schema
from ..input_schema import resolve_description

__all__ = ["DATE_SENTENCE", "Parameter", "attribute", "expected_input_schema", "input_type_of",
           "listed_controls", "page_context", "read_parameters", "synthesize_input_schema",
           "synthesize_page"]

INPUT_TYPES = TEXT_TYPES | NUMBER_TYPES | {
    "hidden", "date", "month", "week", "time", "datetime-local", "color", "checkbox", "radio",
    "file", "submit", "image", "reset", "button"}
# `readonly` takes a control out of the schema only where the attribute applies.
READONLY_TYPES = TEXT_TYPES | {"number", "date", "month", "week", "time", "datetime-local"}
LISTED_ELEMENTS = ("input", "select", "textarea", "button", "output", "fieldset", "object")
LABELABLE_ELEMENTS = frozenset({"button", "input", "meter", "output", "progress", "select",
                                "textarea"})


# A browser reads every attribute as one string. BeautifulSoup splits the few HTML attributes
# that hold lists of words (class, rel, accesskey...) into lists: joined again here.
@overload
def attribute(element: Tag, name: str) -> str | None: ...


@overload
def attribute(element: Tag, name: str, default: str) -> str: ...


def attribute(element: Tag, name: str, default: str | None = None) -> str | None:
    """The value of an element's attribute, or `default` when it has none."""
    value = element.get(name)
    if value is None:
        return default
    return value if isinstance(value, str) else " ".join(value)


def page_context(tool: Tool, form: Tag, url_map: Map, page_path: str = "/") -> dict[str, Any]:
    """What `expected_input_schema` needs to know about a rendered form of `tool`.

    `bound`: the fields its action address carries (the URL rule's arguments, e.g. the event
    of `/events/<event_id>/save`); `choices`: the options the page lists for fields whose
    choices come from the page, read from the form itself.
    """
    action = urlsplit(attribute(form, "action") or page_path).path or page_path
    method = (attribute(form, "method") or "get").upper()
    try:
        _, arguments = url_map.bind("localhost").match(action, method=method)
    except HTTPException:
        arguments = {}
    fields = agent_fields(tool.schema)
    bound = [name for name in arguments if name in fields]
    shown = synthesize_input_schema(form)["properties"]
    choices = {
        name: [(option["const"], option.get("title", ""))
               for option in shown.get(name, {}).get("anyOf", ())]
        for name, field_obj in fields.items()
        if name not in bound and takes_page_choices(field_obj)
    }
    return {"choices": choices, "bound": bound}


# -- from the page: a <form> element as Chromium reads it


@dataclass(frozen=True)
class Parameter:
    """The controls of a form that share one name, and what the browser makes of them."""

    name: str
    members: tuple[Tag, ...]
    schema: Schema | None  # None: agents are not offered these controls
    description: str | None  # its own (a date's format sentence aside)
    grouped: bool  # two or more radios or checkboxes: described only by their <fieldset>

    @property
    def required(self) -> bool:
        return any(member.has_attr("required") for member in self.members)


def synthesize_input_schema(form: Tag) -> Schema:
    """The input schema Chromium 156 derives from `form`.

    `form` must sit in its whole parsed document, so that labels elsewhere (`for=`) and
    controls associated with `form="id"` are found.
    """
    return object_schema((parameter.name, parameter.schema, parameter.required)
                         for parameter in read_parameters(form)
                         if parameter.schema is not None)


def read_parameters(form: Tag) -> list[Parameter]:
    """Every name the form's enabled, writable controls use, in tree order."""
    document = _document_of(form)
    labels = _labels_by_control(document)
    groups: dict[str, list[Tag]] = {}
    for control in listed_controls(form):
        if _is_disabled(control) or _is_read_only(control):
            continue
        groups.setdefault(attribute(control, "name", ""), []).append(control)
    return [_parameter(name, members, labels) for name, members in groups.items()]


def _document_of(tag: Tag) -> Tag:
    root = tag
    while root.parent is not None:
        root = root.parent
    return root


def input_type_of(element: Tag) -> str:
    """The state of an <input>'s type attribute (unknown types are text)."""
    declared = attribute(element, "type", "text").strip(HTML_SPACE).lower()
    return declared if declared in INPUT_TYPES else "text"


def listed_controls(form: Tag) -> list[Tag]:
    """The form's listed elements in tree order, including those outside it with form="id"."""
    document = _document_of(form)
    form_id = attribute(form, "id")
    owner_by_id = document.find(id=form_id) if form_id else None
    found = []
    for element in document.find_all(LISTED_ELEMENTS):
        if element.has_attr("form"):
            owned = bool(form_id) and attribute(element, "form") == form_id and owner_by_id is form
        else:
            owned = element.find_parent("form") is form
        if owned:
            found.append(element)
    return found


def _is_disabled(element: Tag) -> bool:
    if element.has_attr("disabled"):
        return True
    for fieldset in element.find_parents("fieldset"):
        if fieldset.has_attr("disabled"):
            legend = fieldset.find("legend", recursive=False)
            if legend is None or not _is_inside(element, legend):
                return True
    return False


def _is_read_only(element: Tag) -> bool:
    if not element.has_attr("readonly"):
        return False
    return element.name == "textarea" or (element.name == "input"
                                           and input_type_of(element) in READONLY_TYPES)


def _parameter(name: str, members: list[Tag], labels: Mapping[int, list[Tag]]) -> Parameter:
    """What the browser offers for the controls sharing `name` (schema None: nothing)."""
    kinds = {input_type_of(m) if m.name == "input" else m.name for m in members}
    if len(members) > 1 and kinds in ({"radio"}, {"checkbox"}):
        options = [(attribute(m, "value", "on"), _label_text(m, labels)) for m in members]
        description = _group_description(members)
        schema = choice_schema(options, multiple=kinds == {"checkbox"})
        return Parameter(name, tuple(members), describe(schema, description), description, True)
    if len(members) > 1:  # two text inputs (or any other mix) under one name
        return Parameter(name, tuple(members), None, None, False)
    control = members[0]
    description = resolve_description(attribute(control, "toolparamdescription"),
                                      [_text_of_label(label) for label in
                                       labels.get(id(control), ())],
                                      attribute(control, "aria-description"))
    return Parameter(name, (control,), _single_schema(control, description, labels),
                     description, False)


def _single_schema(control: Tag, description: str | None, labels: Mapping[int, list[Tag]]
                   ) -> Schema | None:
    if control.name == "select":
        options = [(_option_value(o), _option_text(o)) for o in control.find_all("option")]
        return describe(choice_schema(options, multiple=control.has_attr("multiple")),
                        description)
    if control.name == "textarea":
        return describe({"type": "string"}, description)
    if control.name != "input":
        return None  # button, output, fieldset, object
    input_type = input_type_of(control)
    if input_type == "radio":
        option = (attribute(control, "value", "on"), _label_text(control, labels))
        return describe(choice_schema([option]), description)
    schema = input_schema(input_type, control.attrs)
    return None if schema is None else describe(schema, description, input_type)


def _group_description(members: list[Tag]) -> str | None:
    """Only the toolparamdescription of the nearest <fieldset> holding every member."""
    for fieldset in members[0].find_parents("fieldset"):
        if all(_is_inside(member, fieldset) for member in members[1:]):
            return attribute(fieldset, "toolparamdescription") or None
    return None


def _labels_by_control(document: Tag) -> dict[int, list[Tag]]:
    """Each labelable control's <label>s, in tree order (`for=` first-id, else nested)."""
    by_control: dict[int, list[Tag]] = {}
    for label in document.find_all("label"):
        if label.has_attr("for"):
            target_id = attribute(label, "for")
            target = document.find(id=target_id) if target_id else None
        else:
            target = next((t for t in label.find_all(LABELABLE_ELEMENTS) if _labelable(t)),
                          None)
        if target is not None and _labelable(target):
            by_control.setdefault(id(target), []).append(label)
    return by_control


def _labelable(element: Tag) -> bool:
    return element.name in LABELABLE_ELEMENTS and not (
        element.name == "input" and input_type_of(element) == "hidden")


def _is_inside(element: Tag | NavigableString, ancestor: Tag) -> bool:
    # By identity: BeautifulSoup compares tags by their markup.
    return any(parent is ancestor for parent in element.parents)


def _text_of_label(label: Tag) -> str:
    """A label's text without the text of controls inside it."""
    return "".join(str(text) for text in label.find_all(string=True)
                   if type(text) is NavigableString and not _in_control(text, label))


def _in_control(text: NavigableString, label: Tag) -> bool:
    for parent in text.parents:
        if parent is label:
            return False
        if parent.name in LABELABLE_ELEMENTS:
            return True
    return False


def _label_text(control: Tag, labels: Mapping[int, list[Tag]]) -> str | None:
    """An option's title: its labels' text, or None (no title) when empty."""
    return resolve_description(None, [_text_of_label(label)
                                      for label in labels.get(id(control), ())])


def _option_text(option: Tag) -> str:
    return "".join(str(text) for text in option.find_all(string=True)
                   if type(text) is NavigableString and text.find_parent("option") is option)


def _option_value(option: Tag) -> str:
    value = attribute(option, "value")
    if value is not None:
        return value
    return " ".join(part for part in re.split(f"[{HTML_SPACE}]+", _option_text(option)) if part)


def synthesize_page(html: str | bytes) -> dict[str, Schema]:
    """Every tool form of a page: tool name -> schema (the first form of a name wins)."""
    soup = BeautifulSoup(html, "html.parser")
    schemas: dict[str, Schema] = {}
    for form in soup.select("form[toolname][tooldescription]"):
        name = attribute(form, "toolname", "")
        if TOOL_NAME_RE.fullmatch(name):
            schemas.setdefault(name, synthesize_input_schema(form))
    return schemas

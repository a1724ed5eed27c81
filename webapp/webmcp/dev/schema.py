"""The JSON Schema a WebMCP browser derives from a tool form, read from either side of the form.

    synthesize_input_schema(form)       the rendered <form>, read the way Chromium 156 reads it
    expected_input_schema(tool, ...)    the tool's marshmallow schema, through the same
                                        `Control`s the form macros render

Both directions build each property with the same functions (`input_schema`, `choice_schema`,
`describe`), so they can disagree only when the rendered form and the schema do. The rules are
Chromium's (reference/webmcp.md §1.2-1.3), checked against Chromium 156 itself; where Chromium
and the reference differ, Chromium's behaviour is the one written here:

- controls are grouped by `name` after dropping disabled ones and read-only ones (where
  `readonly` applies); a name shared by anything but radios only or checkboxes only is left
  out, hidden inputs and buttons included; a control without `name` is keyed "";
- a radio or checkbox "group" of one member is described like a single control;
- label texts are trimmed one by one and joined with "; "; descriptions are otherwise taken
  verbatim; a `pattern` is kept only when it compiles with the `v` flag (see `patterns`).

Not modelled: numbers beyond double precision (Chromium rounds them, e.g. min="0.30000000000000004"
gives 0.3); unknown `\\p{...}` property names in a pattern; whitespace-only text, which
BeautifulSoup's html.parser collapses to one space before we see it (an <option> of spaces);
forms inside shadow roots; file inputs and form-associated custom elements (both behind flags
that are off in Chromium 156); markup that the HTML parser would repair differently from the
parser that built the tree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
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
from ..forms import Control
from ..forms import agent_fields
from ..forms import controls_for
from ..forms import takes_page_choices
from .patterns import is_valid_pattern

Schema = dict[str, Any]

DATE_SENTENCE = "Dates MUST be provided in 'YYYY-MM-DD' format."
TEXT_TYPES = frozenset({"text", "search", "tel", "email", "url", "password"})
NUMBER_TYPES = frozenset({"number", "range"})
INPUT_TYPES = TEXT_TYPES | NUMBER_TYPES | {
    "hidden", "date", "month", "week", "time", "datetime-local", "color", "checkbox", "radio",
    "file", "submit", "image", "reset", "button"}
# `readonly` takes a control out of the schema only where the attribute applies.
READONLY_TYPES = TEXT_TYPES | {"number", "date", "month", "week", "time", "datetime-local"}
LISTED_ELEMENTS = ("input", "select", "textarea", "button", "output", "fieldset", "object")
LABELABLE_ELEMENTS = frozenset({"button", "input", "meter", "output", "progress", "select",
                                "textarea"})
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
        pattern = attrs.get("pattern")
        if pattern is not None and is_valid_pattern(pattern):
            return {"type": "string", "pattern": pattern}
        return {"type": "string"}
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

"""A linter for WebMCP declarative forms in Jinja templates.

    flask --app yoursite webmcp lint [PATHS...]

Each template is checked as source (JSON-LD blocks, the result block of pages) and as the
HTML it renders (every tool form: attributes, controls, descriptions, catalog, schema). The
HTML comes from the sample pages the site registers (`WebMCP(app, catalog, samples=...)`:
real requests with realistic data); a template that no sample page uses is rendered on its own,
with every missing variable undefined. A finding is one line, `path:line: CODE message`, at
the template line that writes the form (or the control) it is about.

WMCP015 asks V8 itself whether a `pattern` compiles with the `v` flag (`patterns`): the
patterns of every page are gathered during the run and compiled together in one headless
Chromium at its end. No grammar of ours stands in for the engine, so without Playwright or a
Chromium that rule is not checked: the linter still runs every other rule, and says beside its
summary that the patterns went unchecked and why (`Linter.unchecked`), which is no finding and
leaves the exit status alone.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup
from bs4 import Tag
from flask import Flask
from flask import request
from flask import template_rendered
from jinja2 import ChainableUndefined
from jinja2 import Environment
from jinja2 import FileSystemLoader
from jinja2 import TemplateError
from jinja2 import meta
from jinja2 import nodes
from werkzeug.routing import Map
from werkzeug.test import TestResponse

from ..catalog import TOOL_NAME_RE
from ..catalog import Catalog
from ..catalog import Tool
from ..forms import agent_fields
from ..input_schema import expected_input_schema
from ..negotiation import error_slot_id
from ..routes import route_rule
from .patterns import BrowserUnavailable
from .patterns import rejected_patterns
from .schema import Parameter
from .schema import attribute
from .schema import input_type_of
from .schema import listed_controls
from .schema import page_context
from .schema import read_parameters
from .schema import synthesize_input_schema

# Description lengths are counted in columns, as a terminal shows them: a CJK character
# counts two. One limit then serves every language, and is about as strict for Chinese as
# for English: the same sentence takes some 2/3 of the columns, and about as many tokens.
MAX_TOOL_DESCRIPTION = 500
MAX_PARAM_DESCRIPTION = 200


@dataclass(frozen=True)
class Rule:
    """One check: its code, what it finds, and why that matters."""

    code: str
    finds: str
    rationale: str


RULES = (
    Rule("WMCP000", "a template that cannot be parsed or rendered",
         "Nothing else in it can be checked until it renders."),
    Rule("WMCP001", "toolname without tooldescription, or the reverse",
         "Chromium registers a form only with both: half a pair is a tool that silently is not "
         "there."),
    Rule("WMCP002", "a toolname outside [A-Za-z0-9_.-]{1,128}",
         "Chromium skips the form without an error (a space is enough)."),
    Rule("WMCP003", "a tool that is not in the catalog",
         "The catalog is the one reviewed list of what agents may do; a template must not add "
         "to it."),
    Rule("WMCP004", "two forms with the same toolname on one page",
         "Only the first is registered; the other never reaches an agent."),
    Rule("WMCP005", "a control in a tool form without a name",
         "Its value is never submitted, and Chromium offers it under the key \"\" (or drops "
         "it beside another nameless control, such as the submit button)."),
    Rule("WMCP006", "an agent-visible control without a <label> or toolparamdescription",
         "The agent sees a bare name and must guess what it means."),
    Rule("WMCP007", "a radio or checkbox group without <fieldset toolparamdescription>",
         "Chromium describes a group only from its fieldset; labels just title the options."),
    Rule("WMCP008", "a form without toolautosubmit and without a submit button",
         "The agent's call fails: the person needs a button to press."),
    Rule("WMCP009", "toolautosubmit on a tool whose catalog entry says a person submits it",
         "The agent could finish alone what the catalog leaves to a person."),
    Rule("WMCP010", "tooldescription, tooltitle or toolautosubmit differ from the catalog",
         "Agents and reviewers would see two different tools."),
    Rule("WMCP011", "a description that is empty, too long, or lists the fields",
         "Agents read descriptions as instructions: say what and when, briefly; the schema "
         "already lists fields, options and limits. Lengths are in columns: a CJK character "
         "counts two."),
    Rule("WMCP012", "a <script type=\"application/ld+json\"> not rendered through tojson",
         "Only tojson escapes <, > and & in a script: other text can end the block early or "
         "hand the agent broken JSON."),
    Rule("WMCP013", "an answer showing a result without exactly one JSON-LD block",
         "After a navigating submit the agent gets the page's JSON-LD: pages carry it through "
         "their base template, partial answers through webmcp/partial.html."),
    Rule("WMCP014", "schema drift: the form's schema differs from the catalog's",
         "What the browser derives from the form must be what the marshmallow schema "
         "promises."),
    Rule("WMCP015", "a pattern attribute that browsers ignore",
         "Browsers compile pattern with the v flag and drop it silently when that fails: no "
         "check for people, none in the agent's schema. V8 judges, in a headless Chromium; "
         "without one the rule is not checked, and the summary says so."),
    Rule("WMCP016", "an htmx tool form that an answer could replace: its swap, or a failure "
                    "with no error slot beside the form",
         "A form replaced while the agent's call on it is pending cancels the call: swap "
         "beside the form, or morph (innerMorph, outerMorph) a target that holds it; and give "
         "the form its error slot (`tool_form` does), outside the form, for the failures the "
         "error handlers answer (CSRF, 404, 413, 429, 503), which render no form."),
    Rule("WMCP017", "a choice whose options the page supplies, without a description saying "
                    "whose words their titles are",
         "Option titles reach the agent's schema as written: when they are stored content (an "
         "organizer's event titles) the agent must read them as data, and a declarative form "
         "can only say so in the description (schema field metadata option_titles)."),
)
# htmx swap styles that put new elements in place of the target's content or the target.
REPLACING_SWAPS = frozenset({"innerHTML", "outerHTML", "textContent", "delete"})
RULE_CODES = frozenset(rule.code for rule in RULES)


@dataclass(frozen=True, order=True)
class Finding:
    """One problem at one template line."""

    path: str
    line: int
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.code} {self.message}"


@dataclass(frozen=True)
class Problem:
    """A finding in rendered HTML, before it is traced back to a template line."""

    code: str
    message: str
    tool: str | None = None
    control: str | None = None
    near: str | None = None  # text to look for when there is no tool to look for
    pattern: str | None = None  # a pattern to ask V8 about: a finding only if V8 rejects it


@dataclass(frozen=True)
class RenderedPage:
    """An HTML answer and the templates that rendered it."""

    url: str
    rule: str | None  # the URL rule that answered, e.g. "/events/<event_id>"
    html: str
    templates: tuple[str, ...]
    shows_result: bool  # a template was rendered with a `result` to show


#: What `WebMCP(samples=...)` names: a function that renders an app's sample pages.
Samples = Callable[[Flask], Iterable[RenderedPage]]


class PageRecorder:
    """Sends requests to an app (through its test client) and keeps every HTML answer with
    the templates that rendered it: how a site builds its sample pages."""

    def __init__(self, app: Flask):
        self.app = app
        self.client = app.test_client()
        self.pages: list[RenderedPage] = []

    def get(self, url: str, **kwargs: Any) -> TestResponse:
        """GET `url` (keyword arguments as for the test client)."""
        return self.open(url, method="GET", **kwargs)

    def post(self, url: str, **kwargs: Any) -> TestResponse:
        """POST to `url` (keyword arguments as for the test client)."""
        return self.open(url, method="POST", **kwargs)

    def open(self, url: str, **kwargs: Any) -> TestResponse:
        """Send one request; keep its answer when it is HTML."""
        rendered: list[tuple[str, dict[str, Any], str | None]] = []

        def record(sender: Flask, template: Any, context: dict[str, Any], **extra: Any) -> None:
            rule = route_rule(self.app, request.url_rule.endpoint) if request.url_rule else None
            rendered.append((template.name, context, rule.rule if rule else None))

        with template_rendered.connected_to(record, self.app):
            response = self.client.open(url, **kwargs)
        if response.mimetype == "text/html" and rendered:
            names = []
            for name, context, _ in rendered:
                names.append(name)
                if isinstance(context.get("partial_template"), str):
                    names.append(context["partial_template"])  # see negotiation.render_result
            self.pages.append(RenderedPage(
                url=url, rule=rendered[-1][2], html=response.get_data(as_text=True),
                templates=tuple(names),
                shows_result=any(context.get("result") is not None for _, context, _ in rendered)))
        return response


@dataclass
class Linter:
    """Lints templates of one app against its tool catalog."""

    app: Flask
    catalog: Catalog
    samples: Samples | None = None
    findings: set[Finding] = field(default_factory=set)
    templates_checked: int = 0
    pages_checked: int = 0
    # pattern -> the findings it makes if V8 rejects it (WMCP015, asked once at the end)
    patterns: dict[str, set[Finding]] = field(default_factory=dict)
    unchecked: str | None = None  # why the patterns were not compiled, when they were not

    def run(self, paths: Iterable[Path] = ()) -> list[Finding]:
        """Every finding in the templates under `paths` (default: all the app's templates)."""
        files = list(template_files(self.app, paths))
        self.templates_checked = len(files)
        names = {template_name(self.app, path): path for path in files}
        unreadable = [path for path in files if not self.check_source(path)]
        names = {name: path for name, path in names.items() if path not in unreadable}
        covered: set[str] = set()
        if self.samples and any(name for name in names if name):
            for page in self.samples(self.app):
                covered.update(self.check_sample(page, names))
                self.pages_checked += 1
        for name, path in names.items():
            if name is None or name not in covered:
                self.check_alone(path, name)
        self.check_patterns()
        return sorted(self.findings)

    # -- source

    def check_source(self, path: Path) -> bool:
        """Check a template's source; False when it cannot even be parsed."""
        source = path.read_text(encoding="utf-8")
        shown = display_path(path)
        for block in JSONLD_SCRIPT.finditer(source):
            if not TOJSON_ONLY.fullmatch(block.group(1)):
                self.add(shown, line_of(source, block.start()), "WMCP012",
                         "JSON-LD must be a single {{ value|tojson }} expression")
        try:
            tree = self.app.jinja_env.parse(source)
        except TemplateError as error:
            self.add(shown, getattr(error, "lineno", None) or 1, "WMCP000", str(error))
            return False
        if "result" in meta.find_undeclared_variables(tree) and is_page(tree, source):
            chain = [source, *self.extended_sources(tree)]
            if not any(renders_jsonld(text) for text in chain):
                self.add(shown, 1, "WMCP013",
                         "this page shows `result` but neither it nor the templates it extends "
                         "render the JSON-LD block (the `jsonld` macro)")
        return True

    def extended_sources(self, tree: nodes.Template) -> Iterator[str]:
        """The sources of the templates `tree` extends, nearest first."""
        for extends in tree.find_all(nodes.Extends):
            if isinstance(extends.template, nodes.Const):
                name = extends.template.value
                source, _ = template_source(self.app.jinja_env, name)
                yield source
                yield from self.extended_sources(self.app.jinja_env.parse(source))

    # -- rendered

    def check_sample(self, page: RenderedPage, names: dict[str | None, Path]) -> set[str]:
        """Check one sample page; returns the templates it covers."""
        closure = template_closure(self.app.jinja_env, page.templates)
        sources = [(name, self.source_of(name)) for name in closure]
        path = page.url.split("?")[0]
        # The catalog's texts are read as the page's own request read them (its language).
        with as_request(self.app, page.url):
            problems = check_page(page.html, self.catalog, self.app.url_map, path)
        for problem in problems:
            owner, line = locate(problem, sources)
            if owner in names:
                self.report(problem, display_path(names[owner]), line)
        blocks = len(JSONLD_SCRIPT.findall(page.html))
        owner = page.templates[-1]
        if page.shows_result and blocks != 1 and owner in names:
            self.add(display_path(names[owner]), 1, "WMCP013",
                     f"{page.url} shows a result with {blocks} JSON-LD blocks, not one")
        return set(closure)

    def check_alone(self, path: Path, name: str | None) -> None:
        """Render a template no sample page uses, without data, and check that."""
        shown = display_path(path)
        source = path.read_text(encoding="utf-8")
        try:
            html = render_alone(self.app, source)
        except (TemplateError, TypeError, ValueError, LookupError) as error:
            self.add(shown, getattr(error, "lineno", None) or 1, "WMCP000",
                     f"could not render this template on its own ({error}); add a sample "
                     "page that uses it")
            return
        with as_request(self.app, "/"):
            problems = check_page(html, self.catalog, self.app.url_map, "/")
        for problem in problems:
            _, line = locate(problem, [(name or shown, source)])
            self.report(problem, shown, line)

    def source_of(self, name: str) -> str:
        """The source of the template the app loads as `name`."""
        source, _ = template_source(self.app.jinja_env, name)
        return source

    def report(self, problem: Problem, path: str, line: int) -> None:
        """Record a problem at its template line; one about a pattern waits for V8."""
        if problem.pattern is None:
            self.add(path, line, problem.code, problem.message)
        else:
            finding = Finding(path, line, problem.code, problem.message)
            self.patterns.setdefault(problem.pattern, set()).add(finding)

    def check_patterns(self) -> None:
        """WMCP015: compile every pattern met in one Chromium; report those V8 rejects."""
        try:
            rejected = rejected_patterns(self.patterns)
        except BrowserUnavailable as error:
            count = len(self.patterns)
            self.unchecked = f"{count} pattern{'' if count == 1 else 's'} not compiled, so " \
                             f"WMCP015 was not checked: {error}"
            return
        for pattern, reason in rejected.items():
            for finding in self.patterns[pattern]:
                self.findings.add(replace(finding, message=f"{finding.message} ({reason})"))

    def add(self, path: str, line: int, code: str, message: str) -> None:
        """Record a finding (the same finding from several pages counts once)."""
        assert code in RULE_CODES, code
        self.findings.add(Finding(path, line, code, message))


@contextmanager
def as_request(app: Flask, url: str) -> Iterator[None]:
    """Contexts of their own for a request to `url`: what the catalog says there (in the
    page's language, say) is what it said to the request that rendered the page."""
    with app.app_context(), app.test_request_context(url):
        yield


# -- checks of one rendered page


def check_page(html: str, catalog: Catalog, url_map: Map, path: str = "/") -> list[Problem]:
    """Every problem of the tool forms in one rendered page."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for form in BeautifulSoup(html, "html.parser").find_all("form"):
        name, description = attribute(form, "toolname"), attribute(form, "tooldescription")
        if name is None and description is None:
            continue
        if name is None or description is None:
            missing = "tooldescription" if description is None else "toolname"
            problems.append(Problem("WMCP001", f"a tool form without {missing} is not a tool",
                                    tool=name, near="tooldescription="))
            continue
        if not TOOL_NAME_RE.fullmatch(name):
            problems.append(Problem("WMCP002", f"tool name {name!r} is not registered by "
                                               "browsers: use 1-128 of A-Z a-z 0-9 _ . -",
                                    tool=name))
            continue
        if name in seen:
            problems.append(Problem("WMCP004", f"{name} appears twice on one page; agents "
                                               "only get the first", tool=name))
            continue
        seen.add(name)
        problems.extend(check_form(form, name, description, catalog, url_map, path))
    return problems


def check_form(form: Tag, name: str, description: str, catalog: Catalog, url_map: Map,
               path: str) -> Iterator[Problem]:
    """The problems of one registered tool form."""
    tool = catalog[name] if name in catalog else None
    if tool is None:
        yield Problem("WMCP003", f"{name} is not in the tool catalog", tool=name)
    else:
        yield from check_metadata(form, tool)
    if not form.has_attr("toolautosubmit") and not any(map(is_submit_button,
                                                           listed_controls(form))):
        yield Problem("WMCP008", f"{name} has no toolautosubmit and no submit button", tool=name)
    yield from check_swap(form, name)
    for control in listed_controls(form):
        if is_fillable(control) and not attribute(control, "name"):
            yield Problem("WMCP005", f"{name} has a <{control.name}> without a name", tool=name)
    parameters = [p for p in read_parameters(form) if p.schema is not None and p.name]
    yield from check_tool_description(name, description, parameters)
    for parameter in parameters:
        yield from check_parameter(name, parameter)
    if tool is not None:
        context = page_context(tool, form, url_map, path)
        yield from check_option_titles(tool, context["choices"], parameters)
        synthesized = synthesize_input_schema(form)
        expected = expected_input_schema(tool, **context)
        drift = schema_difference(synthesized, expected)
        if drift:
            yield Problem("WMCP014", f"{name}: {drift}", tool=name)


def check_swap(form: Tag, name: str) -> Iterator[Problem]:
    """WMCP016: no answer to an htmx tool form (which the JS bridge swaps for agents as htmx
    does) may replace the form: neither its own swap, nor a failure, which goes to the form's
    error slot (`negotiation.render_error_result`)."""
    def htmx(key: str) -> str | None:
        return attribute(form, key) or attribute(form, f"data-{key}")

    if htmx("hx-get") is None and htmx("hx-post") is None:
        return
    page = list(form.parents)[-1]
    selector = htmx("hx-target")
    target: Tag | None = form
    if selector not in (None, "this"):
        try:
            target = page.select_one(selector)
        except ValueError:  # htmx's extended selectors ("closest …") are not CSS
            target = None
    style = (htmx("hx-swap") or "innerHTML").split()[0]
    if target is not None and holds(target, form) and style in REPLACING_SWAPS:
        yield Problem("WMCP016", f"{name}: hx-target {selector or 'this'} holds the form and "
                                 f"hx-swap {style} replaces it", tool=name)
    slot_id = error_slot_id(name)
    slot = page.find(id=slot_id)
    if not isinstance(slot, Tag):
        yield Problem("WMCP016", f"{name}: no error slot #{slot_id} beside the form: a failure "
                                 "(CSRF, 404, 413, 429, 503) has nowhere to go", tool=name)
    elif holds(slot, form) or holds(form, slot):
        where, effect = (("holds", "replace") if holds(slot, form) else ("is inside", "change"))
        yield Problem("WMCP016", f"{name}: the error slot #{slot_id} {where} the form: a "
                                 f"failure swapped into it would {effect} the form", tool=name)


def holds(outer: Tag, inner: Tag) -> bool:
    """Whether `inner` is `outer` or inside it."""
    return inner is outer or any(parent is outer for parent in inner.parents)


def check_option_titles(tool: Tool, page_choices: Iterable[str], parameters: list[Parameter]
                        ) -> Iterator[Problem]:
    """WMCP017: every choice whose options the page supplies says, in its description, whose
    words their titles are."""
    shown = {parameter.name: parameter.description or "" for parameter in parameters}
    fields = agent_fields(tool.schema)
    for name in page_choices:
        titles = str(fields[name].metadata.get("option_titles") or "")
        if not titles or titles not in shown.get(name, titles):
            yield Problem("WMCP017", f"{tool.name}: the page supplies the options of {name!r}, "
                                     "and its description does not say whose words their "
                                     "titles are (give the field option_titles)",
                          tool=tool.name, control=name)


def check_metadata(form: Tag, tool: Tool) -> Iterator[Problem]:
    """The form's attributes against the tool's catalog entry."""
    autosubmit = form.has_attr("toolautosubmit")
    if autosubmit and not tool.autosubmit:
        yield Problem("WMCP009", f"{tool.name} must be submitted by a person: remove "
                                 "toolautosubmit", tool=tool.name)
    differs = [attribute for attribute, same in (
        ("tooldescription", attribute(form, "tooldescription") == tool.form_description),
        ("tooltitle", attribute(form, "tooltitle") == str(tool.title)),
        ("toolautosubmit", autosubmit or not tool.autosubmit),
    ) if not same]
    if differs:
        yield Problem("WMCP010", f"{tool.name}: {', '.join(differs)} differ from the catalog",
                      tool=tool.name)


def check_tool_description(name: str, description: str, parameters: list[Parameter]
                           ) -> Iterator[Problem]:
    """An empty, long or field-listing tooldescription."""
    if not description.strip():
        yield Problem("WMCP011", f"{name} has an empty tooldescription", tool=name)
    elif columns(description) > MAX_TOOL_DESCRIPTION:
        yield Problem("WMCP011", f"{name}'s tooldescription is {columns(description)} columns "
                                 f"(at most {MAX_TOOL_DESCRIPTION})", tool=name)
    named = [p.name for p in parameters if p.name and mentions(description, p.name)]
    if len(named) >= 2:
        yield Problem("WMCP011", f"{name}'s tooldescription lists its fields "
                                 f"({', '.join(named)}): the schema already does", tool=name)


def check_parameter(name: str, parameter: Parameter) -> Iterator[Problem]:
    """One agent-visible parameter: its description, pattern and toolparamdescriptions."""
    where = {"tool": name, "control": parameter.name}
    if not parameter.description:
        if parameter.grouped:
            yield Problem("WMCP007", f"{name}: the group {parameter.name!r} needs a "
                                     "<fieldset toolparamdescription> around it", **where)
        else:
            yield Problem("WMCP006", f"{name}: {parameter.name!r} has no <label> or "
                                     "toolparamdescription", **where)
    for member in parameter.members:
        pattern = attribute(member, "pattern")
        if member.name == "input" and pattern is not None:
            yield Problem("WMCP015", f"{name}: browsers ignore the pattern of "
                                     f"{parameter.name!r}", pattern=pattern, **where)
        describers = [member, *member.find_parents("fieldset")]
        for describer in describers:
            text = attribute(describer, "toolparamdescription")
            if text is not None and not text.strip():
                yield Problem("WMCP011", f"{name}: empty toolparamdescription near "
                                         f"{parameter.name!r}", **where)
            elif text is not None and columns(text) > MAX_PARAM_DESCRIPTION:
                yield Problem("WMCP011", f"{name}: the toolparamdescription of "
                                         f"{parameter.name!r} is {columns(text)} columns "
                                         f"(at most {MAX_PARAM_DESCRIPTION})", **where)


def columns(text: str) -> int:
    """How many columns `text` takes in a terminal: two for a wide (CJK) character."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def mentions(text: str, parameter: str) -> bool:
    """True when `text` names the parameter (as written, or with spaces for underscores)."""
    spellings = {parameter, parameter.replace("_", " ")}
    return any(re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", text, re.IGNORECASE)
               for s in spellings)


def is_fillable(control: Tag) -> bool:
    """A control a person or an agent puts a value in (not a button or a hidden value)."""
    if control.name == "input":
        return input_type_of(control) not in ("hidden", "submit", "image", "reset", "button")
    return control.name in ("select", "textarea")


def is_submit_button(control: Tag) -> bool:
    """A <button> of type submit (the default) or an <input type=submit|image>."""
    if control.name == "button":
        return attribute(control, "type", "submit").lower() not in ("button", "reset")
    return control.name == "input" and input_type_of(control) in ("submit", "image")


def schema_difference(synthesized: dict[str, Any], expected: dict[str, Any]) -> str | None:
    """What differs between the form's schema and the expected one, in a few words."""
    found, wanted = synthesized["properties"], expected["properties"]
    for name in wanted:
        if name not in found:
            return f"the form lacks {name!r}"
    for name in found:
        if name not in wanted:
            return f"the form has {name!r}, which the schema does not"
    for name in wanted:
        for key in dict.fromkeys([*wanted[name], *found[name]]):
            if found[name].get(key) != wanted[name].get(key):
                return f"{name!r}: {key} is {_brief(found[name].get(key))} in the form, " \
                       f"{_brief(wanted[name].get(key))} in the schema"
    if list(found) != list(wanted):
        return f"the form's order {list(found)} is not the schema's {list(wanted)}"
    if synthesized["required"] != expected["required"]:
        return f"required is {synthesized['required']} in the form, {expected['required']} " \
               "in the schema"
    return None


def _brief(value: Any, width: int = 60) -> str:
    if value is None:
        return "absent"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[:width - 3] + "..."


# -- templates: files, names, sources, rendering


JSONLD_SCRIPT = re.compile(
    r"<script\b[^>]*\btype\s*=\s*[\"']?application/ld\+json[\"']?[^>]*>(.*?)</script\s*>",
    re.IGNORECASE | re.DOTALL)
TOJSON_ONLY = re.compile(r"\s*\{\{-?[^{}]*\|\s*tojson(?:\([^()]*\))?\s*-?\}\}\s*", re.DOTALL)


def renders_jsonld(source: str) -> bool:
    """True when a template writes a JSON-LD block (itself or with the `jsonld` macro)."""
    return bool(JSONLD_SCRIPT.search(source)) or bool(re.search(r"\bjsonld\s*\(", source))


def is_page(tree: nodes.Template, source: str) -> bool:
    """A whole page: it extends another template, or writes <html> itself."""
    return any(True for _ in tree.find_all(nodes.Extends)) or bool(
        re.search(r"<html[\s>]", source, re.IGNORECASE))


def template_files(app: Flask, paths: Iterable[Path]) -> Iterator[Path]:
    """The .html files under `paths`, or under every template folder of the app but the
    toolkit's own (its macros and partial are checked by its tests, not by every site's)."""
    own = (Path(__file__).parent.parent / "templates").resolve()
    roots = [Path(p) for p in paths] or [Path(folder) for folder in template_folders(app)
                                         if Path(folder).resolve() != own]
    for root in roots:
        if root.is_dir():
            yield from sorted(root.rglob("*.html"))
        else:
            yield root


def template_folders(app: Flask) -> list[str]:
    """The folders the app loads templates from (its own first, then its blueprints')."""
    loaders = [app.jinja_loader, *(bp.jinja_loader for bp in app.iter_blueprints())]
    return [folder for loader in loaders if isinstance(loader, FileSystemLoader)
            for folder in loader.searchpath]


def template_name(app: Flask, path: Path) -> str | None:
    """The name the app loads `path` by, or None for a file outside its template folders."""
    resolved = path.resolve()
    for folder in template_folders(app):
        try:
            name = resolved.relative_to(Path(folder).resolve()).as_posix()
        except ValueError:
            continue
        _, filename = template_source(app.jinja_env, name)
        if filename is not None and Path(filename).resolve() == resolved:
            return name
    return None


def template_source(env: Environment, name: str) -> tuple[str, str | None]:
    """The source of the template `env` loads as `name`, and its file if it has one."""
    if env.loader is None:  # a Flask app's environment always has its loader
        raise LookupError(f"no loader to find the template {name!r}")
    source, filename, _ = env.loader.get_source(env, name)
    return source, filename


def template_closure(env: Environment, names: Iterable[str]) -> list[str]:
    """`names` and every template they extend, include or import, in discovery order."""
    found: list[str] = []
    pending = list(names)
    while pending:
        name = pending.pop(0)
        if name in found:
            continue
        found.append(name)
        source, _ = template_source(env, name)
        pending.extend(n for n in meta.find_referenced_templates(env.parse(source)) if n)
    return found


def render_alone(app: Flask, source: str) -> str:
    """A template rendered without data: every missing variable is a chainable undefined."""
    env = app.jinja_env.overlay(undefined=ChainableUndefined)
    with app.test_request_context("/"):
        context: dict[str, Any] = {}
        app.update_template_context(context)
        return env.from_string(source).render(context)


def locate(problem: Problem, sources: list[tuple[str, str]]) -> tuple[str, int]:
    """The template and line that write what `problem` is about (else the first, line 1)."""
    needles = []
    if problem.tool:
        tool = re.escape(problem.tool)
        needles += [rf"(?:toolname\s*=\s*|tool_form\(\s*)[\"']{tool}[\"']", rf"[\"']{tool}[\"']"]
    if problem.near:
        needles.append(re.escape(problem.near))
    for needle in needles:
        for name, source in sources:
            found = re.search(needle, source)
            if found:
                line = line_of(source, found.start())
                if problem.control:
                    control = re.search(rf"name\s*=\s*[\"']{re.escape(problem.control)}[\"']",
                                        source)
                    line = line_of(source, control.start()) if control else line
                return name, line
    return sources[0][0], 1


def line_of(source: str, offset: int) -> int:
    """The 1-based line of a character offset."""
    return source.count("\n", 0, offset) + 1


def display_path(path: Path) -> str:
    """`path` relative to the working directory when it is below it."""
    try:
        return path.resolve().relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()

__all__ = ["Finding", "Linter", "MAX_PARAM_DESCRIPTION", "MAX_TOOL_DESCRIPTION", "PageRecorder",
           "RULES", "RULE_CODES", "RenderedPage", "Rule", "Samples", "check_tool_description",
           "columns"]

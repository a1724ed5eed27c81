"""`synthesize_input_schema` reads a form the way Chromium 156 does.

Each `schema_cases/NAME.html` holds small hand-written forms, one per rule of
flask-webmcp/docs/chromium.md §3 (and the corners found while checking it); `NAME.chromium.json` is
what Chromium 156 itself derived from that file, recorded with
`webmcp_agent.py schema NAME.html` (the `getTools()` output, tool name -> inputSchema).

The synthesizer takes a `pattern` as written; Chromium drops one that V8 does not compile with
the `v` flag. So a pattern Chromium dropped is the one difference allowed, and a browser test
below proves that V8 rejects exactly those.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from helpers import one

from flask_webmcp.dev.patterns import rejected_patterns
from flask_webmcp.dev.schema import synthesize_input_schema
from flask_webmcp.dev.schema import synthesize_page
from flask_webmcp.input_schema import DATE_SENTENCE

CASES = Path(__file__).parent / "schema_cases"


def recorded(case: Path) -> dict[str, Any]:
    schemas: dict[str, Any] = json.loads(case.with_suffix(".chromium.json").read_text())
    return schemas


def dropped_patterns(ours: dict[str, Any], chromium: dict[str, Any]) -> dict[str, str]:
    """The patterns (by "tool.field") that our schemas keep and Chromium's lack."""
    return {f"{tool}.{name}": ours[tool]["properties"][name]["pattern"]
            for tool, schema in chromium.items() if tool in ours
            for name, property_ in schema["properties"].items()
            if "pattern" not in property_
            and "pattern" in ours[tool]["properties"].get(name, {})}


def without(dropped: dict[str, str], ours: dict[str, Any]) -> dict[str, Any]:
    """`ours` without the `dropped` patterns."""
    ours = copy.deepcopy(ours)
    for where in dropped:
        tool, name = where.split(".", 1)
        del ours[tool]["properties"][name]["pattern"]
    return ours


@pytest.mark.parametrize("case", sorted(CASES.glob("*.html")), ids=lambda path: path.stem)
def test_matches_what_chromium_derived(case):
    chromium = recorded(case)
    ours = synthesize_page(case.read_text())
    assert without(dropped_patterns(ours, chromium), ours) == chromium
    for name, schema in chromium.items():  # dict equality ignores the order of properties
        assert list(ours[name]["properties"]) == list(schema["properties"]), name


@pytest.mark.browser
def test_chromium_dropped_exactly_the_patterns_v8_rejects():
    """Asked once for every case: Chromium's recorded schemas lack a pattern iff V8 (in
    Chromium, through `rejected_patterns`) does not compile it with the `v` flag."""
    written: dict[str, str] = {}
    dropped: dict[str, str] = {}
    for case in sorted(CASES.glob("*.html")):
        ours = synthesize_page(case.read_text())
        written |= {f"{tool}.{name}": property_["pattern"] for tool, schema in ours.items()
                    for name, property_ in schema["properties"].items() if "pattern" in property_}
        dropped |= dropped_patterns(ours, recorded(case))
    rejected = rejected_patterns(written.values())
    assert dropped and {where for where, pattern in written.items() if pattern in rejected} \
        == set(dropped)


def test_every_case_file_has_its_recording():
    for case in CASES.glob("*.html"):
        assert case.with_suffix(".chromium.json").exists(), case.name


def test_the_reference_example_verbatim():
    """flask-webmcp/docs/chromium.md §3's worked example: the order_tea form and the schema
    Chromium 156 gave for it (`order_tea.reference.json`, kept as it was recorded)."""
    page = BeautifulSoup((CASES / "descriptions.html").read_text(), "html.parser")
    form = one(page, "form[toolname=order_tea]")
    reference = json.loads((CASES / "order_tea.reference.json").read_text())
    assert synthesize_input_schema(form) == reference


def test_a_date_without_description_gets_the_sentence_alone():
    page = BeautifulSoup('<form><input type="date" name="day"></form>', "html.parser")
    schema = synthesize_input_schema(one(page, "form"))
    assert schema["properties"]["day"]["description"] == DATE_SENTENCE
    assert DATE_SENTENCE == "Dates MUST be provided in 'YYYY-MM-DD' format."


def test_a_form_is_read_within_its_document():
    """A label and a control outside the <form> element count only from the whole page."""
    page = BeautifulSoup('<label for="q">Words</label><form id="f"></form>'
                         '<input id="q" name="q" form="f">', "html.parser")
    assert synthesize_input_schema(one(page, "form"))["properties"] == {
        "q": {"type": "string", "description": "Words"}}

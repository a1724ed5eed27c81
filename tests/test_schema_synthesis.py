"""`synthesize_input_schema` reads a form the way Chromium 156 does.

Each `schema_cases/NAME.html` holds small hand-written forms, one per rule of
docs/webmcp.md §3 (and the corners found while checking it); `NAME.chromium.json` is
what Chromium 156 itself derived from that file, recorded with
`webmcp_agent.py schema NAME.html` (the `getTools()` output, tool name -> inputSchema).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from helpers import one

from flask_webmcp.dev.schema import synthesize_input_schema
from flask_webmcp.dev.schema import synthesize_page
from flask_webmcp.input_schema import DATE_SENTENCE

CASES = Path(__file__).parent / "schema_cases"


def recorded(case: Path) -> dict[str, Any]:
    schemas: dict[str, Any] = json.loads(case.with_suffix(".chromium.json").read_text())
    return schemas


@pytest.mark.parametrize("case", sorted(CASES.glob("*.html")), ids=lambda path: path.stem)
def test_matches_what_chromium_derived(case):
    chromium = recorded(case)
    ours = synthesize_page(case.read_text())
    assert ours == chromium
    for name, schema in chromium.items():  # dict equality ignores the order of properties
        assert list(ours[name]["properties"]) == list(schema["properties"]), name


def test_every_case_file_has_its_recording():
    for case in CASES.glob("*.html"):
        assert case.with_suffix(".chromium.json").exists(), case.name


def test_the_reference_example_verbatim():
    """docs/webmcp.md §3's worked example: the order_tea form and the schema Chromium 156
    gave for it (`order_tea.reference.json`, kept as it was recorded)."""
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

"""The example shop: nothing of the events site, every kind of answer the extension gives."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup

sys.path.insert(0, str(Path(__file__).parent.parent / "examples" / "bookshop"))

from bookshop import CATALOG  # noqa: E402 - found through the path set just above
from bookshop import create_app  # noqa: E402

JSON = {"Accept": "application/json"}
HTMX = {"HX-Request": "true"}


@pytest.fixture
def app():
    return create_app({"TESTING": True})


@pytest.fixture
def client(app):
    return app.test_client()


def csrf_token(html: str) -> str:
    field = BeautifulSoup(html, "html.parser").select_one("input[name=csrf_token]")
    assert field is not None
    return str(field["value"])


def embedded_result(html: str) -> dict[str, Any]:
    """The envelope an agent reads from the page (its one JSON-LD block)."""
    (block,) = BeautifulSoup(html, "html.parser").select('script[type="application/ld+json"]')
    envelope: dict[str, Any] = json.loads(block.string or "")
    return envelope


def test_a_search_answers_json_the_partial_and_the_page_with_one_envelope(client):
    as_json = client.get("/books?query=liu", headers=JSON)
    partial = client.get("/books?query=liu", headers=HTMX)
    page = client.get("/books?query=liu")
    assert as_json.status_code == partial.status_code == page.status_code == 200
    assert as_json.json["status"] == "success"
    assert [book["id"] for book in as_json.json["data"]["books"]] == ["three-body"]
    assert embedded_result(partial.text) == embedded_result(page.text) == as_json.json
    assert "<form" not in partial.text and "<html" not in partial.text
    for answer in (as_json, partial, page):
        assert "Accept" in answer.headers["Vary"]


def test_each_form_is_the_tool_of_the_catalog(client):
    """The forms carry the catalog's names and descriptions; only the search submits itself."""
    pages = [client.get("/books").text, client.get("/books/three-body").text]
    forms = {form["toolname"]: form for html in pages
             for form in BeautifulSoup(html, "html.parser").select("form[toolname]")}
    assert set(forms) == set(CATALOG.names)
    for tool in CATALOG:
        assert forms[tool.name]["tooldescription"] == tool.form_description
        assert forms[tool.name].has_attr("toolautosubmit") == tool.autosubmit
    # The book is the page's own: it is no control of the order form.
    assert [control["name"] for control in forms["order_book"].select("[name]")] == [
        "csrf_token", "quantity"]


def test_bad_input_answers_invalid_input_with_the_field_errors(client):
    answer = client.get("/books?genre=comics", headers=JSON)
    assert answer.status_code == 422
    assert answer.json["status"] == "invalid_input"
    assert list(answer.json["errors"]) == ["genre"]
    page = client.get("/books?genre=comics")
    assert page.status_code == 422
    shown = BeautifulSoup(page.text, "html.parser").select_one("#find_books-genre-error")
    assert shown is not None and "Must be one of" in shown.text


def test_an_order_without_javascript_lands_on_the_page_that_shows_it_once(client):
    token = csrf_token(client.get("/books/three-body").text)
    ordered = client.post("/books/three-body/order", data={"quantity": "2", "csrf_token": token})
    assert ordered.status_code == 303
    assert ordered.headers["Location"] == "/books/three-body"
    landed = client.get("/books/three-body")
    assert embedded_result(landed.text)["message"] == "Ordered 2 of The Three-Body Problem."
    again = client.get("/books/three-body")
    assert 'application/ld+json' not in again.text  # carried once, then gone


def test_an_order_a_json_client_sends_answers_in_place(app, client):
    token = csrf_token(client.get("/books/tang-poems").text)
    answer = client.post("/books/tang-poems/order", json={"quantity": 1},
                         headers={**JSON, "X-CSRFToken": token})
    assert answer.status_code == 201  # the action says it creates: an order
    assert answer.json["data"]["order"] == {"book_id": "tang-poems", "quantity": 1}
    assert app.extensions["bookshop"].orders == [answer.json["data"]["order"]]
    too_many = client.post("/books/tang-poems/order", json={"quantity": 6},
                           headers={**JSON, "X-CSRFToken": token})
    assert too_many.status_code == 422 and list(too_many.json["errors"]) == ["quantity"]


def test_an_order_cannot_name_its_book_twice(client):
    """The address says which book: a field saying another is refused, not obeyed."""
    token = csrf_token(client.get("/books/three-body").text)
    answer = client.post("/books/three-body/order", json={"quantity": 1, "book_id": "x"},
                         headers={**JSON, "X-CSRFToken": token})
    assert answer.status_code == 422 and list(answer.json["errors"]) == ["book_id"]


def test_an_unknown_book_is_not_found_and_names_the_tool_to_find_one(client):
    token = csrf_token(client.get("/books/three-body").text)
    answer = client.post("/books/no-such-book/order", json={"quantity": 1},
                         headers={**JSON, "X-CSRFToken": token})
    assert answer.status_code == 404
    assert answer.json["status"] == "not_found" and answer.json["nextAction"] == "find_books"


def test_a_post_without_the_form_token_is_refused(app, client):
    answer = client.post("/books/three-body/order", data={"quantity": "1"})
    assert answer.status_code == 400
    assert app.extensions["bookshop"].orders == []


def test_the_templates_lint_clean(webmcp_lint):
    """With the extension's pytest plugin, as any app's suite may do it."""
    report = webmcp_lint(create_app())
    assert report.findings == [], report
    assert report.templates == 5 and report.pages >= 10


def test_the_lint_command_says_the_same():
    result = create_app().test_cli_runner().invoke(args=["webmcp", "lint"])
    assert result.exit_code == 0, result.output
    assert re.search(r"\d+ templates, [1-9]\d* sample pages: no findings", result.output)


def mcp(client, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """One JSON-RPC request to /mcp, as an MCP client of the 2025-06-18 protocol sends it."""
    answer = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": method,
                                       "params": params or {}},
                         headers={"Accept": "application/json, text/event-stream",
                                  "MCP-Protocol-Version": "2025-06-18"})
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json["result"]
    return result


def test_mcp_clients_get_the_catalog_and_may_search_but_never_order(app, client):
    listed = mcp(client, "tools/list")["tools"]
    assert [tool["name"] for tool in listed] == CATALOG.names
    assert listed[0]["annotations"]["readOnlyHint"] is True
    found = mcp(client, "tools/call", {"name": "find_books", "arguments": {"query": "liu"}})
    assert not found["isError"]
    assert found["structuredContent"]["data"]["count"] == 1
    assert json.loads(found["content"][0]["text"]) == found["structuredContent"]
    refused = mcp(client, "tools/call", {"name": "find_books", "arguments": {"genre": "comics"}})
    assert refused["isError"] and list(refused["structuredContent"]["errors"]) == ["genre"]
    ordered = mcp(client, "tools/call", {"name": "order_book",
                                         "arguments": {"book_id": "three-body", "quantity": 1}})
    assert ordered["isError"] and ordered["structuredContent"]["status"] == "invalid_input"
    assert app.extensions["bookshop"].orders == []

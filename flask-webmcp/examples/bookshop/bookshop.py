"""A bookshop with two WebMCP tools, the smallest site that shows the whole extension.

`find_books` searches (an agent may submit it itself); `order_book` orders copies of a book,
and only the person may press its button. Each answers a JSON client, an htmx request or a
browser from the same action, and a POST made without JavaScript is answered with a redirect
to the page that shows its result. `/mcp` offers the same tools to MCP clients, which may
search but never order: an order needs the person, on the page. Run it with::

    flask --app bookshop run          # then open http://127.0.0.1:5000/books
    flask --app bookshop webmcp lint  # with flask-webmcp[dev]: check its templates
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

from flask import Flask
from flask import abort
from flask import current_app
from flask import render_template
from flask import url_for
from flask_wtf.csrf import CSRFProtect
from marshmallow import Schema
from marshmallow import fields
from marshmallow import validate
from werkzeug.wrappers import Response

from flask_webmcp import Catalog
from flask_webmcp import Tool
from flask_webmcp import WebMCP
from flask_webmcp.actions import Action
from flask_webmcp.calls import Calls
from flask_webmcp.catalog import Hints
from flask_webmcp.inputs import input_fields
from flask_webmcp.mcp import MCPEndpoint
from flask_webmcp.mcp import ToolOutcome
from flask_webmcp.negotiation import page_result
from flask_webmcp.negotiation import render_post_result
from flask_webmcp.negotiation import render_result
from flask_webmcp.negotiation import with_vary
from flask_webmcp.result import Status
from flask_webmcp.result import ToolResult
from flask_webmcp.result import not_found
from flask_webmcp.result import people_only
from flask_webmcp.routes import page_route
from flask_webmcp.routes import tool_actions
from flask_webmcp.routes import tool_route

if TYPE_CHECKING:
    from flask_webmcp.dev.lint import RenderedPage


class FindBooksInput(Schema):
    query = fields.String(validate=validate.Length(max=100),
                          metadata={"label": "Words", "description": "Words in titles and authors"})
    genre = fields.String(validate=validate.OneOf(["novel", "poetry"], labels=["Novels", "Poetry"]),
                          metadata={"label": "Genre", "description": "Kind of book"})


class OrderBookInput(Schema):
    book_id = fields.String(required=True)
    quantity = fields.Integer(required=True, validate=validate.Range(min=1, max=5),
                              metadata={"label": "Copies", "description": "How many copies"})


class BookOutput(Schema):
    id = fields.String(required=True)
    title = fields.String(required=True)
    author = fields.String(required=True)
    genre = fields.String(required=True)


class FoundBooksOutput(Schema):
    books = fields.List(fields.Nested(BookOutput), required=True)
    count = fields.Integer(required=True)


CATALOG = Catalog([
    Tool(name="find_books", title="Find books", schema=FindBooksInput, autosubmit=True,
         output=FoundBooksOutput, description="Search the shop's books and list the matches.",
         hints=Hints(read_only=True, idempotent=True, open_world=False)),
    Tool(name="order_book", title="Order a book", schema=OrderBookInput, autosubmit=False,
         description="Order the book on this page. The person confirms the order."),
])

BOOKS = {
    "dream-red-chamber": {"title": "Dream of the Red Chamber", "author": "Cao Xueqin",
                          "genre": "novel"},
    "three-body": {"title": "The Three-Body Problem", "author": "Liu Cixin", "genre": "novel"},
    "tang-poems": {"title": "Three Hundred Tang Poems", "author": "Sun Zhu", "genre": "poetry"},
}


class CarriedInMemory:
    """Where a POST's result waits for the page after its redirect: a dict, good for one
    process. A site with several workers keeps them in its database or cache instead."""

    def __init__(self) -> None:
        self.kept: dict[str, dict[str, Any]] = {}

    def keep(self, carried: dict[str, Any]) -> str:
        key = secrets.token_urlsafe(16)
        self.kept[key] = carried
        return key

    def take(self, key: str) -> dict[str, Any] | None:
        return self.kept.pop(key, None)


@dataclass(frozen=True)
class Shop:
    """The books on sale and the orders taken since the app started (a real shop stores
    them)."""

    books: dict[str, dict[str, str]]
    orders: list[dict[str, Any]]


@CATALOG.action("find_books", answers=(Status.SUCCESS,))
def find_books(shop: Shop, params: dict[str, Any]) -> ToolResult:
    """The books whose title or author holds every word, of the genre asked for."""
    words = params.get("query", "").lower().split()
    matches = [{"id": book_id, **book} for book_id, book in shop.books.items()
               if all(word in f"{book['title']} {book['author']}".lower() for word in words)
               and params.get("genre") in (None, book["genre"])]
    return ToolResult("find_books", Status.SUCCESS, f"Books found: {len(matches)}.",
                      data={"books": matches, "count": len(matches)})


@CATALOG.action("order_book", answers=(Status.SUCCESS, Status.NOT_FOUND), creates=True)
def order_book(shop: Shop, params: dict[str, Any]) -> ToolResult:
    """Order copies of a book."""
    book = shop.books.get(params["book_id"])
    if book is None:
        return not_found("order_book", "There is no such book.", next_action="find_books")
    shop.orders.append(params)
    return ToolResult("order_book", Status.SUCCESS,
                      f"Ordered {params['quantity']} of {book['title']}.",
                      data={"order": params})


ShopAction = Action[Callable[[Shop, dict[str, Any]], ToolResult]]


def run_in_shop(action: ShopAction, params: dict[str, Any], principal: str | None,
                source: str) -> ToolResult:
    """How a call runs here: the action with the app's shop (nobody signs in)."""
    return action.run(current_app.extensions["bookshop"], params)


CALLS = Calls(execute=run_in_shop)


def call_tool(tool: Tool, arguments: dict[str, Any]) -> ToolOutcome:
    """An MCP client's call: a search runs as its form would; an order is the person's."""
    if not tool.hints.read_only:
        return ToolOutcome.of(people_only(tool.name))
    action = tool_actions(current_app)[tool.name]
    return ToolOutcome.of(CALLS.call(action, input_fields(arguments), source="mcp",
                                     typed=True).result)


MCP = MCPEndpoint(CATALOG, name="bookshop", version="0.1.0", call_tool=call_tool,
                  principal=lambda: "anyone")


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """The shop: a catalog of two tools, their forms, and one route for each."""
    app = Flask(__name__)
    # A new key each start (sessions end with the process); a real shop sets its own.
    app.config.update(SECRET_KEY=secrets.token_hex(16), **(config or {}))
    csrf = CSRFProtect(app)
    WebMCP(app, CATALOG, carried=CarriedInMemory(), samples="bookshop:sample_pages")
    shop = app.extensions["bookshop"] = Shop(dict(BOOKS), [])

    @tool_route(app, "/books", find_books, offers=("find_books",))
    def books() -> Response:
        """The search form and what it found (every visit is a search)."""
        result, submitted = CALLS.route_call()
        return render_result(result, "books.html", "_books.html", values=submitted)

    @page_route(app, "/books/<book_id>", "book", offers=("order_book",))
    def book(book_id: str) -> Response:
        """A book's page with its order form, showing the order just placed if any."""
        if book_id not in shop.books:
            abort(404)
        return with_vary(render_template("book.html", result=page_result(), book_id=book_id,
                                         book=shop.books[book_id], values={}))

    @tool_route(app, "/books/<book_id>/order", order_book, methods=("POST",),
                offers=("order_book",))
    def order(book_id: str) -> Response:
        """Order copies of a book: people and agents reach the same action."""
        result, submitted = CALLS.route_call(bound={"book_id": book_id})
        return render_post_result(result, "book.html", "_ordered.html",
                                  redirect_to=url_for("book", book_id=book_id),
                                  book_id=book_id, book=shop.books.get(book_id),
                                  values=submitted)

    @app.route("/mcp", methods=MCP.METHODS)  # POST; 405 for GET, DELETE; CORS preflights
    @csrf.exempt  # an MCP client sends no form token (and no cookie to protect)
    def mcp() -> Response:
        """The tools for MCP clients (Streamable HTTP, one JSON answer per request)."""
        return MCP.respond()

    return app


def sample_pages(app: Flask) -> list[RenderedPage]:
    """The pages `flask webmcp lint` and `flask webmcp manifest` read: every template in each
    state it can show (a fresh copy of the shop, so nothing is ordered in the real one)."""
    from flask_webmcp.dev.lint import PageRecorder

    visit = PageRecorder(create_app({"TESTING": True, "WTF_CSRF_ENABLED": False}))
    for url in ("/books", "/books?query=three", "/books?genre=comics", "/books/three-body"):
        visit.get(url)
        visit.get(url, headers={"HX-Request": "true"})
    for quantity in ("9", "2"):
        visit.post("/books/three-body/order", data={"quantity": quantity},
                   follow_redirects=True)
    return visit.pages

"""Another Flask site with its own catalog: the fixtures are linted as its templates.

It shows what adopting the toolkit takes (a catalog of tools with marshmallow schemas, routes
for them, `WebMCP(app, catalog)`) and gives the fixtures a tool a person must submit.
"""

from __future__ import annotations

from flask import Flask
from flask_wtf.csrf import CSRFProtect
from marshmallow import Schema
from marshmallow import fields
from marshmallow import validate

from webapp.webmcp import WebMCP
from webapp.webmcp.catalog import Catalog
from webapp.webmcp.catalog import Tool


class FindBooksInput(Schema):
    query = fields.String(validate=validate.Length(max=100),
                          metadata={"label": "Words", "description": "Words in titles and authors"})
    genre = fields.String(validate=validate.OneOf(["novel", "poetry"], labels=["Novels", "Poetry"]),
                          metadata={"label": "Genre", "description": "Kind of book"})


class OrderBookInput(Schema):
    book_id = fields.String(required=True)
    quantity = fields.Integer(required=True, validate=validate.Range(min=1, max=5),
                              metadata={"label": "Copies", "description": "How many copies"})


class ReturnBookInput(Schema):
    # Its options are the visitor's orders, titled with the books' titles (stored content).
    order_id = fields.String(required=True,
                             metadata={"label": "Your orders", "widget": "radio",
                                       "description": "Order to return, from this page"})


CATALOG = Catalog([
    Tool(name="find_books", title="Find books", schema=FindBooksInput, autosubmit=True,
         description="Search the shop's books and list the matches."),
    Tool(name="order_book", title="Order a book", schema=OrderBookInput, autosubmit=False,
         description="Order the book on this page. The person confirms the order."),
    Tool(name="return_book", title="Return a book", schema=ReturnBookInput, autosubmit=False,
         description="Return one of the books ordered. The person confirms the return."),
])


def create_app() -> Flask:
    app = Flask(__name__)
    app.config.update(SECRET_KEY="bookshop", TESTING=True)
    CSRFProtect(app)
    WebMCP(app, CATALOG)

    @app.get("/books")
    def find_books():
        return "books"

    @app.post("/books/<book_id>/order")
    def order_book(book_id: str):
        return "ordered"

    @app.post("/orders/return")
    def return_book():
        return "returned"

    return app

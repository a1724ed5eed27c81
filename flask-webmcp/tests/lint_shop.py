"""The example shop with two more tools, whose templates are the linter's broken fixtures.

`return_book` lists the visitor's orders as radio buttons titled with the books' titles
(stored content), and `redeem_voucher` validates its code with a pattern that Python accepts
and browsers ignore: two rules need them. The other tools are `examples/bookshop`'s.
"""

from __future__ import annotations

import sys
from pathlib import Path

from flask import Flask
from flask_wtf.csrf import CSRFProtect
from marshmallow import Schema
from marshmallow import fields
from marshmallow import validate

sys.path.insert(0, str(Path(__file__).parent.parent / "examples" / "bookshop"))

import bookshop  # noqa: E402 - found through the path set just above

from flask_webmcp import Catalog  # noqa: E402
from flask_webmcp import Tool  # noqa: E402
from flask_webmcp import WebMCP  # noqa: E402

FIXTURES = Path(__file__).parent / "lint_fixtures"


class ReturnBookInput(Schema):
    # Its options are the visitor's orders, titled with the books' titles (stored content).
    order_id = fields.String(required=True,
                             metadata={"label": "Your orders", "widget": "radio",
                                       "description": "Order to return, from this page"})


# Python's `re` takes the unescaped "-" in the class; the `v` flag browsers use does not.
VOUCHER_CODE = r"^[A-Z0-9-]{6,12}$"


class RedeemVoucherInput(Schema):
    code = fields.String(required=True, validate=validate.Regexp(VOUCHER_CODE),
                         metadata={"label": "Voucher code", "description": "Code on the voucher"})


CATALOG = Catalog([
    *bookshop.CATALOG,
    Tool(name="return_book", title="Return a book", schema=ReturnBookInput, autosubmit=False,
         description="Return one of the books ordered. The person confirms the return."),
    Tool(name="redeem_voucher", title="Redeem a voucher", schema=RedeemVoucherInput,
         autosubmit=False, description="Redeem a gift voucher. The person confirms it."),
])


def create_app() -> Flask:
    """A site with the catalog above and a route for each tool (the fixtures are linted by
    their paths)."""
    app = Flask(__name__)
    app.config.update(SECRET_KEY="lint fixtures", TESTING=True)
    CSRFProtect(app)
    WebMCP(app, CATALOG)

    @app.get("/books")
    def find_books() -> str:
        return "books"

    @app.post("/books/<book_id>/order")
    def order_book(book_id: str) -> str:
        return "ordered"

    @app.post("/orders/return")
    def return_book() -> str:
        return "returned"

    @app.post("/vouchers")
    def redeem_voucher() -> str:
        return "redeemed"

    return app

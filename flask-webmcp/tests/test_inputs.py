"""Reading a tool's input from a request: a multipart form's files are fields too."""

from __future__ import annotations

from io import BytesIO

from flask import Flask

from flask_webmcp.inputs import read_input


def test_a_multipart_forms_files_are_input_and_one_left_empty_is_not_given():
    app = Flask(__name__)
    body = {"alt": " A stage ", "picture": (BytesIO(b"\x89PNG..."), "cover.png", "image/png"),
            "other": (BytesIO(b""), "")}
    with app.test_request_context("/", method="POST", data=body,
                                  content_type="multipart/form-data"):
        given = read_input()
        assert set(given) == {"alt", "picture"}
        assert given["alt"] == "A stage"
        assert given["picture"].mimetype == "image/png"
        assert given["picture"].read() == b"\x89PNG..."

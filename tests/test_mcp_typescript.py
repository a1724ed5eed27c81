"""The TypeScript SDK's client (`@modelcontextprotocol/sdk`, the one most desktop apps are built
on; pinned in tools/mcp-client) against gunicorn: it connects in the handshake era, lists the
tools, searches (checking the answer against the tool's outputSchema, as it does), and
reports an unknown method and an unknown tool as the JSON-RPC errors -32601 and -32602 they
are, not as a failed transport ("Error POSTing to endpoint").
"""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest
from helpers import PROJECT_ROOT
from servers import gunicorn

from webapp.domain.catalog import CATALOG

pytestmark = pytest.mark.slow  # a server, and Node (tools/mcp-client, installed by make test)

CLIENT = PROJECT_ROOT / "tools" / "mcp-client"
SDK = CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict[str, Any]:
    """What the TypeScript client made of each of its requests."""
    node = shutil.which("node")
    assert node and SDK.is_file(), "the TypeScript SDK is not installed: run `make mcp-client`"
    database = tmp_path_factory.mktemp("mcp-typescript") / "events.sqlite"
    with gunicorn(database, workers=2, threads=2) as (base, _):
        ran = subprocess.run([node, str(CLIENT / "client.mjs"), f"{base}/mcp"], cwd=CLIENT,
                             capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    answered: dict[str, Any] = json.loads(ran.stdout)
    return answered


def test_the_pinned_sdk_is_the_one_the_lock_file_names():
    locked = json.loads((CLIENT / "package-lock.json").read_text())
    pinned = locked["packages"]["node_modules/@modelcontextprotocol/sdk"]["version"]
    assert json.loads(SDK.read_text())["version"] == pinned


def test_it_connects_and_lists_the_catalog(report):
    assert "connect" not in report, report
    assert report["protocolVersion"] == "2025-11-25"
    assert report["server"] == "webmcp-events"
    assert report["tools"] == {"result": CATALOG.names}


def test_it_searches_and_the_answer_fits_the_output_schema(report):
    assert report["search"] == {"result": {"isError": False, "status": "success"}}


def test_an_argument_of_the_wrong_type_is_the_tools_invalid_input(report):
    assert report["badPage"] == {"result": {"isError": True, "status": "invalid_input",
                                            "fields": ["page"]}}


@pytest.mark.parametrize(("asked", "code"), [("unknownMethod", -32601), ("unknownTool", -32602)])
def test_a_protocol_fault_is_reported_as_its_json_rpc_error(report, asked, code):
    assert report[asked]["error"] == "McpError", report[asked]
    assert report[asked]["code"] == code

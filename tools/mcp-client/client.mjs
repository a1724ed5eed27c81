// The TypeScript SDK's MCP client against a site's /mcp, as desktop apps built on it connect:
// `node client.mjs http://127.0.0.1:8000/mcp`. It connects (the initialize handshake), lists
// the tools, searches, then asks for a method and a tool the server does not have, and prints
// one JSON object saying what the client made of each: a result, or the error it reported
// (its class and code), so the caller can tell a JSON-RPC error from a failed transport.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function failure(error) {
  return { error: error.constructor.name, code: error.code ?? null, message: String(error.message) };
}

async function outcome(work) {
  try {
    return { result: await work() };
  } catch (error) {
    return failure(error);
  }
}

const client = new Client({ name: "webmcp-events-test", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(process.argv[2]), {
  requestInit: { headers: { "Accept-Language": "en" } },
});
const report = {};
try {
  await client.connect(transport);
  report.protocolVersion = transport.protocolVersion ?? null;
  report.server = client.getServerVersion()?.name ?? null;
  report.tools = await outcome(async () => (await client.listTools()).tools.map((tool) => tool.name));
  // The SDK checks structuredContent against the tool's outputSchema: a mismatch throws.
  report.search = await outcome(async () => {
    const answer = await client.callTool({ name: "search_events", arguments: { query: "webmcp" } });
    return { isError: answer.isError, status: answer.structuredContent?.status };
  });
  report.badPage = await outcome(async () => {
    const answer = await client.callTool({ name: "search_events", arguments: { page: "2" } });
    return { isError: answer.isError, status: answer.structuredContent?.status,
             fields: Object.keys(answer.structuredContent?.errors ?? {}) };
  });
  report.unknownMethod = await outcome(() => client.listPrompts());
  report.unknownTool = await outcome(() => client.callTool({ name: "confirm_registration",
                                                             arguments: {} }));
} catch (error) {
  report.connect = failure(error);
} finally {
  await client.close();
}
process.stdout.write(JSON.stringify(report) + "\n");

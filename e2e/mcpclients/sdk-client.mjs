// Drives a real `parley serve` with the official MCP TypeScript SDK client over streamable
// HTTP, calling every tool the way a TypeScript agent would pass its arguments (numbers as
// numbers, lists as arrays). Run by e2e/mcpclients_test.go; by hand:
//
//   PARLEY_MCP_URL=http://127.0.0.1:7070/mcp PARLEY_TOKEN=<seat token> node sdk-client.mjs
//
// It prints one JSON line per call ({"tool","args","isError","text"}), then one line
// {"listed":[…],"called":[…]}, and exits 1 when a listed tool was not called or a call
// failed. Adding a call is one line in `calls`.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.env.PARLEY_MCP_URL;
const token = process.env.PARLEY_TOKEN;
if (!url || !token) {
  console.error("set PARLEY_MCP_URL (the server's /mcp) and PARLEY_TOKEN (a seat token)");
  process.exit(2);
}

const note = "v1 note limiter to all n=1\nposted by the TypeScript SDK client\n";
const calls = [
  ["whoami", {}],
  ["post", { body: note, key: "ts-sdk-1" }],
  ["post", { intent: "report", topic: "limiter", to: ["all"], lines: ["composed by parts in the TypeScript SDK"], key: "ts-sdk-2" }],
  ["search", { query: "TypeScript", limit: 5 }],
  ["read", {}],
  ["read", { after: 0, wait: 1 }],
  ["inbox", {}],
  ["state", { topic: "limiter" }],
  ["lint", { body: note }],
];

const client = new Client({ name: "parley-e2e-ts-sdk", version: "0.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
await client.connect(transport);

const listed = (await client.listTools()).tools.map((t) => t.name).sort();
const called = new Set();
let failed = false;
for (const [tool, args] of calls) {
  const res = await client.callTool({ name: tool, arguments: args });
  const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  console.log(JSON.stringify({ tool, args, isError: !!res.isError, text }));
  called.add(tool);
  failed ||= !!res.isError;
}
const missing = listed.filter((t) => !called.has(t));
console.log(JSON.stringify({ listed, called: [...called].sort(), missing }));
await client.close();
if (missing.length > 0) {
  console.error(`tools listed but not called: ${missing.join(", ")}`);
  process.exit(1);
}
process.exit(failed ? 1 : 0);

#!/usr/bin/env node
// A dependency-free MCP server over stdio (newline-delimited JSON-RPC) for Kandev's tests.
// Tool `whoami` answers with FIXTURE_TOKEN from its env and its arguments; `where` with its working directory.
"use strict";
const readline = require("readline");
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const tools = [
  { name: "whoami", description: "Echo FIXTURE_TOKEN and the arguments", inputSchema: { type: "object" } },
  { name: "where", description: "The server's working directory", inputSchema: { type: "object" } },
];
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  let request;
  try { request = JSON.parse(line); } catch { return; }
  if (request.id === undefined) return;
  const reply = (result) => send({ jsonrpc: "2.0", id: request.id, result });
  if (request.method === "initialize") {
    reply({ protocolVersion: request.params.protocolVersion, capabilities: { tools: {} },
            serverInfo: { name: "fixture-mcp", version: "1.2.3" } });
  } else if (request.method === "tools/list") {
    reply({ tools });
  } else if (request.method === "tools/call") {
    const args = request.params.arguments || {};
    const text = request.params.name === "where"
      ? process.cwd()
      : `token=${process.env.FIXTURE_TOKEN || "(none)"} args=${JSON.stringify(args)}`;
    reply({ content: [{ type: "text", text }], isError: false });
  } else if (request.method === "ping") {
    reply({});
  } else {
    send({ jsonrpc: "2.0", id: request.id, error: { code: -32601, message: "method not found" } });
  }
});

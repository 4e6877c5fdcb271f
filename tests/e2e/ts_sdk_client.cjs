// A client written with the official TypeScript MCP SDK, driven by test_ts_sdk.py.
// Usage: node ts_sdk_client.cjs stdio BINARY ROOT | node ts_sdk_client.cjs http URL
// It declares the tasks extension (as the Inspector does), runs a cell that takes a second
// while asking for progress, then two cells that share a variable, and prints what it saw as
// one JSON object on stdout.

const { Client } = require("@modelcontextprotocol/sdk/client");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const DESC = "a cell from the TypeScript SDK suite";

async function main() {
  const [mode, ...rest] = process.argv.slice(2);
  const transport =
    mode === "stdio"
      ? new StdioClientTransport({ command: rest[0], args: ["mcp", "--no-daemon", "--root", rest[1]], stderr: "ignore" })
      : new StreamableHTTPClientTransport(new URL(rest[0]));
  const client = new Client(
    { name: "ts-sdk-suite", version: "0" },
    { capabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } },
  );
  await client.connect(transport);
  const seen = { protocol: transport.protocolVersion ?? null, progress: [] };
  const tools = await client.listTools();
  seen.tools = tools.tools.map((t) => t.name).sort();
  const slow = await client.callTool(
    { name: "eval", arguments: { code: "import time\ntime.sleep(1.5)\n6 * 7", description: DESC } },
    undefined,
    { onprogress: (p) => seen.progress.push(p.message), timeout: 120000 },
  );
  seen.slow = { content: slow.content, isError: slow.isError ?? false, keys: Object.keys(slow).sort() };
  await client.callTool({ name: "eval", arguments: { code: "kept = 5", description: DESC } });
  const kept = await client.callTool({ name: "eval", arguments: { code: "kept + 1", description: DESC } });
  seen.kept = kept.content;
  if (mode !== "stdio") {
    seen.session = transport.sessionId ? "yes" : "no";
    await transport.terminateSession();
  }
  await client.close();
  process.stdout.write(JSON.stringify(seen) + "\n");
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});

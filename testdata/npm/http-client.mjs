// http-client connects the TypeScript SDK's client to a streamable HTTP
// MCP endpoint, as a client of the 2025-11-25 protocol (with sessions),
// lists the tools, calls one, and prints one JSON line:
//
//   node http-client.mjs URL TOOL ARGS_JSON
//   {"session":"…","protocol":"…","tools":N,"text":"…"}
//
// Any failure is printed as {"error":"..."} and the process exits 1.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, tool, args] = process.argv.slice(2);
try {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: "ts-http-client", version: "1" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const res = await client.callTool({ name: tool, arguments: JSON.parse(args || "{}") });
  const text = (res.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  process.stdout.write(JSON.stringify({
    session: transport.sessionId || "",
    protocol: transport.protocolVersion || "",
    tools: tools.length,
    text,
  }) + "\n");
  await client.close();
} catch (err) {
  process.stdout.write(JSON.stringify({ error: String(err?.stack ?? err) }) + "\n");
  process.exit(1);
}

// bench-client drives one MCP server through the TypeScript SDK's own
// client, for the proxy benchmark (BenchmarkProxyTable, make bench-proxy):
// the proxy-cost targets of issue 15 were set with this client, whose own
// cost per call is part of every figure it measures.
//
//   node bench-client.mjs COMMAND [ARG...]
//
// It starts COMMAND over stdio with its own environment and directory
// (COMMAND's stderr is ignored), prints {"pid":N} (the server's pid, whose
// CPU the benchmark reads), then runs one JSON command per stdin line and
// answers each with one JSON line on stdout:
//
//   {"op":"wait","tool":T,"args":{}}       until a call of T succeeds
//   {"op":"calls","tool":T,"args":{},"n":N,"inflight":K}
//       N tools/call of T, K at a time; K=1 answers {"lat":[µs,...]},
//       otherwise {"seconds":S} for all N
//
// A tool answering isError, or any failure, is printed as {"error":"..."}
// and the process exits 1. End of stdin closes the client.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node bench-client.mjs COMMAND [ARG...]");
  process.exit(2);
}

function fail(err) {
  process.stdout.write(JSON.stringify({ error: String(err?.stack ?? err) }) + "\n");
  process.exit(1);
}

const transport = new StdioClientTransport({
  command,
  args,
  env: process.env,
  cwd: process.cwd(),
  stderr: "ignore", // a router's log is not the benchmark's output
});
const client = new Client({ name: "bench-proxy-ts-sdk", version: "1" });

async function call(tool, toolArgs) {
  const res = await client.callTool({ name: tool, arguments: toolArgs });
  if (res.isError) {
    throw new Error(`${tool}: ${JSON.stringify(res)}`);
  }
}

async function run(cmd) {
  switch (cmd.op) {
    case "wait": {
      // A call, not tools/list: the SDK's client rejects a whole list
      // when one tool in it has a schema it does not accept, and the
      // fixture child serves such a tool on purpose.
      const deadline = Date.now() + 60_000;
      for (;;) {
        try {
          await call(cmd.tool, cmd.args);
          return {};
        } catch (err) {
          if (Date.now() > deadline) {
            throw err;
          }
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    case "calls": {
      if (cmd.inflight <= 1) {
        const lat = [];
        for (let i = 0; i < cmd.n; i++) {
          const start = process.hrtime.bigint();
          await call(cmd.tool, cmd.args);
          lat.push(Number(process.hrtime.bigint() - start) / 1000);
        }
        return { lat };
      }
      let next = 0;
      const worker = async () => {
        while (next < cmd.n) {
          next++;
          await call(cmd.tool, cmd.args);
        }
      };
      const start = process.hrtime.bigint();
      await Promise.all(Array.from({ length: cmd.inflight }, worker));
      return { seconds: Number(process.hrtime.bigint() - start) / 1e9 };
    }
    default:
      throw new Error(`unknown op ${cmd.op}`);
  }
}

try {
  await client.connect(transport);
} catch (err) {
  fail(err);
}
process.stdout.write(JSON.stringify({ pid: transport.pid }) + "\n");

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) {
    continue;
  }
  try {
    process.stdout.write(JSON.stringify(await run(JSON.parse(line))) + "\n");
  } catch (err) {
    fail(err);
  }
}
await client.close();

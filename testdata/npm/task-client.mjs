// task-client connects the TypeScript SDK's client to a streamable HTTP
// MCP endpoint as a client of the 2025-11-25 protocol (a session) and
// drives its experimental tasks, one JSON request a line on stdin, one
// JSON line on stdout for each:
//
//   node task-client.mjs URL [BEARER_TOKEN]
//   node task-client.mjs stdio COMMAND [ARGS...]   (over stdio instead)
//   {"op":"call","name":"…","arguments":{…},"ttl":MS}  → {"reply":{"task":{…}}}
//   {"op":"get"|"result"|"cancel","taskId":"…"}        → {"reply":…}
//   {"op":"list"}                                       → {"reply":{"tasks":[…]}}
//   {"op":"tools"}                                      → {"reply":{"tools":[…]}}
//   {"op":"plain","name":"…","arguments":{…}}           → {"reply":<the result>}
//     (a plain tools/call, no task: the SDK's callTool, which refuses a
//     tool the last tools list said runs only as a task)
//
// A request that fails answers {"error":{"code":N,"message":"…"}}. Each
// notifications/tasks/status the server sends is printed as
// {"status":{…}} when it arrives; an elicitation the server sends is
// accepted (each required field with its first choice) and printed as
// {"elicited":{…}}. The first line, once
// connected, is {"ready":"<session id>","tasks":<the server's tasks
// capability>}.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  TaskStatusNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [url, token, ...rest] = process.argv.slice(2);
const print = (v) => process.stdout.write(JSON.stringify(v) + "\n");

try {
  const transport = url === "stdio"
    ? new StdioClientTransport({ command: token, args: rest, env: process.env, stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: token ? { Authorization: `Bearer ${token}` } : {} } });
  const client = new Client(
    { name: "ts-task-client", version: "1" },
    { capabilities: { elicitation: { form: {} }, tasks: { list: {}, cancel: {} } } },
  );
  client.setNotificationHandler(TaskStatusNotificationSchema, (n) => print({ status: n.params }));
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    print({ elicited: req.params });
    // Each required field gets its first choice (oneOf, enum) or "".
    const schema = req.params.requestedSchema || {};
    const content = {};
    for (const name of schema.required || []) {
      const p = (schema.properties || {})[name] || {};
      content[name] = p.oneOf?.[0]?.const ?? p.enum?.[0] ?? "";
    }
    return { action: "accept", content };
  });
  await client.connect(transport);
  print({ ready: transport.sessionId || "", tasks: client.getServerCapabilities()?.tasks ?? null });

  const tasks = client.experimental.tasks;
  const ops = {
    call: (q) => client.request(
      { method: "tools/call", params: { name: q.name, arguments: q.arguments || {}, task: q.ttl ? { ttl: q.ttl } : {} } },
      CreateTaskResultSchema,
    ),
    get: (q) => tasks.getTask(q.taskId),
    result: (q) => tasks.getTaskResult(q.taskId, CallToolResultSchema),
    cancel: (q) => tasks.cancelTask(q.taskId),
    list: () => tasks.listTasks(),
    tools: () => client.listTools(),
    plain: (q) => client.callTool({ name: q.name, arguments: q.arguments || {} }),
  };
  for await (const line of createInterface({ input: process.stdin })) {
    if (!line.trim()) continue;
    const q = JSON.parse(line);
    try {
      print({ reply: await ops[q.op](q) });
    } catch (err) {
      print({ error: { code: err?.code ?? 0, message: String(err?.message ?? err) } });
    }
  }
  await client.close();
} catch (err) {
  print({ fatal: String(err?.stack ?? err) });
  process.exit(1);
}

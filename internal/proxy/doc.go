// Package proxy supervises the child MCP servers: it boots them in
// parallel after the client's handshake, registers their tools in the
// catalog as `<serverId>_<tool>`, forwards calls with a per-call timeout,
// passes progress, log messages and the children's own requests through
// to the calling client, notices a child's death the moment its transport
// closes, restarts it with capped exponential backoff, and on shutdown
// leaves no process behind (stdio children start through package
// procgroup). A child's stdout reaches the MCP transport through a filter
// that skips and logs non-JSON lines (banners, stray prints), and its
// stderr is forwarded line by line, long lines truncated, never blocking.
//
// The configured children are one immutable set; Supervisor.Reconfigure
// replaces it after a reload, keeping unchanged children running, and
// drains a removed or replaced child's calls before stopping it.
//
// A child is one goroutine that owns its process and client session; the
// rest of the router sees it only through the catalog and [Supervisor]'s
// methods. It must not make policy decisions: those run before a call
// reaches it.
//
// # The fast path for proxied tools/call
//
// A router exists to forward calls, so a proxied tools/call has a path
// of its own that keeps the arguments and the child's result as the
// bytes they arrived as. The go-sdk keeps everything else: initialize,
// lists, resources, prompts, logging, progress, the children's requests
// to the client, and every call the fast path declines.
//
// Client side (stdio, package stdio and the server's fastCalls): the
// transport's reading goroutine reads each frame once. A frame that is a
// clean tools/call or notifications/cancelled (checked in place with
// package rawjson: valid JSON and UTF-8, jsonrpc "2.0", an id that is a
// string or a safe integer, no member twice, params an object, depth
// within stdio.MaxDepth) is offered to the fast path before the SDK sees
// it. The fast path takes a call only when the session is initialized,
// params hold nothing but name, arguments and a _meta with at most a
// progressToken, and the name is a proxied tool in the catalog; anything
// else (natives, names still booting, reused ids, task-augmented calls,
// 2026-07-28 per-request metadata) goes on to the SDK exactly as before.
// A taken call runs through the router's ordinary pipeline (the same
// stages, hooks, in-flight accounting and observers) with Call.Raw set,
// on the goroutine that read its frame, in continuation style
// (router.Start): when its child is connected, Supervisor.StartCall
// writes the request and returns, and the reading goroutine goes back to
// reading, with no hand-over and no goroutine left waiting. Whichever of
// the call's outcomes comes first finishes it where it arrives: the
// child's answer on the child's reading goroutine, the request timeout
// on its timer, the client's cancel on its context, the end of the
// child's output on the child's reader (rawCall; the wire's pending set
// decides which one owns the outcome, so there is exactly one). The
// finish runs the rest of the pipeline: in-flight accounting's second
// half, the observers (cooldown, refunds, telemetry), the answer, written
// by the transport under the client's id, string or number, from the
// same write lock as the SDK's answers (router.Call.Deliver), then the
// recorders (audit log, session replay). A call that has to wait first
// (its child still booting or restarting, an HTTP child) runs
// synchronously instead, and the transport moves its reading to another
// goroutine as soon as the call waits, or after stdio.ReleaseAfter at
// the latest: the client's next frames and cancellations are always
// read, and a single-threaded child that stops reading while nobody
// reads its answers cannot close a circle of full pipes through the
// router (cmd/evokore TestFastPathClientThatWritesEverythingBeforeReading).
// With OTLP tracing on, the span is middleware around dispatch and every
// call runs synchronously. A taken call counts in the same open-request
// set that the end of input drains. notifications/cancelled naming a
// taken call cancels it; any other cancellation is the SDK's.
//
// Child side (stdio children, wire.go): the SDK's client and the fast
// path share one connection. Requests go to the child's stdin through one
// lock (lockedStdin), which the SDK's transport also writes through, one
// Write per message, so lines never interleave. Ids never collide: the
// SDK numbers its requests with integers, the fast path uses strings
// "evokore-fp-<n>". The stdout filter (jsonLines) offers each JSON line
// to the wire first; a line holding our prefix is read in place, and a
// response to one of our ids finishes its call right there and never
// reaches the SDK. Everything else (progress, logs, list_changed,
// sampling, elicitation, roots, the SDK's own responses) flows to the SDK
// untouched, so the progress routing, attribution and pass-through in
// forward.go apply to fast calls unchanged: a fast call registers in the
// same routes table and its progress token is minted the same way. A
// call given up (client cancel, request timeout) sends the child
// notifications/cancelled for its id; the end of the child's stdout ends
// every call in flight with the died-during-call result; a child's error
// object is returned as that JSON-RPC error. The result's top level is
// read for isError only, which is all observers (cooldown, telemetry)
// need: they see a stand-in CallToolResult holding IsError, and the
// client gets the child's bytes unless a stage or middleware replaced the
// result (router.RawResult). HTTP children have no wire and go through
// the SDK's client.
//
// Streamable HTTP (the client-facing transport) is designed for, not
// built: over HTTP every call goes through the SDK today. The same split
// would apply per POST. The HTTP handler reads the body once; a single
// clean tools/call for a proxied tool, on a session whose view is
// initialized, is offered to the same fastCalls logic with a Replier that
// writes the answer as the POST's JSON (or one SSE event) body, so ids
// stay the client's and the session is the one named by Mcp-Session-Id.
// net/http's handler goroutine owns the response, so it would run the
// call with router.Run and wait, as the SDK does. Progress and
// server-to-client requests of that call reach the client through the
// session's SDK stream as they do today, attributed by the same routes
// table. Everything else is handed to the SDK's handler with the body
// restored. The child side needs nothing new.
//
// # What the SDK still costs (measured diagnosis, go-sdk v1.8.0)
//
// go-sdk's internal/json.Unmarshal builds a segmentio Decoder per call,
// which allocates a fresh 32 KiB buffer; before the fast path a proxied
// call went through it nine times (DecodeMessage three times, readBatch
// twice, Await, extractRequestMeta, CallToolResult.UnmarshalJSON,
// newServerMethodInfo). make bench-proxy measured 266 KB allocated per
// call (188 allocations) then, and 3.4 KB (60 allocations) on the fast
// path, where no message of a plain call reaches the SDK's decoder. The
// SDK still decodes every message the fast path leaves to it: each
// progress notification a child sends (once on the child session, then
// re-encoded for the client), each log message, and every call to a
// native tool or through an HTTP child, at about 30 KB per decode (266 KB
// over nine). The upstream fix is to decode from the byte slice in place
// (a json.Unmarshal of the frame, or a pooled Decoder) instead of a
// Decoder over a bytes.Reader.
package proxy

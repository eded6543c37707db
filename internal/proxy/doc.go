// Package proxy supervises the child MCP servers: it boots them in
// parallel after the client's handshake, registers their tools in the
// catalog as `<serverId>_<tool>`, forwards calls with a per-call timeout,
// passes progress, log messages and the children's own requests through
// to the calling client, notices a child's death the moment its transport
// closes, restarts it with capped exponential backoff, and on shutdown
// leaves no process behind (stdio children start through package
// procgroup). A child's stdout reaches the MCP transport through a filter
// that skips and logs non-JSON lines (banners, stray prints) and lines
// over 16 MiB, and its stderr is forwarded line by line, long lines
// truncated, never blocking. A skipped line that reads as a response to a
// request of ours (fast path or SDK) is replaced by an error response
// under its id, so the request ends at once saying why instead of at its
// timeout; invalid UTF-8 in a JSON line goes on as U+FFFD, byte by byte,
// as decoders read it.
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
// # Proxied calls as bytes
//
// A router exists to forward calls, so a proxied tools/call keeps its
// arguments and the child's result as the bytes they arrived as. It is an
// ordinary call otherwise: it runs on its own goroutine through the
// router's pipeline (router.Run), like every other call. The go-sdk keeps
// everything else: initialize, lists, resources, prompts, logging,
// progress, the children's requests to the client.
//
// Client side (stdio, package stdio and its Calls): the transport's
// reading goroutine reads each frame once. A frame that is a clean
// tools/call or notifications/cancelled (checked in place with package
// rawjson: valid JSON and UTF-8, jsonrpc "2.0", an id that is a string or
// a safe integer, no member twice, params an object, depth within
// stdio.MaxDepth) is offered to stdio.Calls before the SDK sees it.
// It takes a call only when the session is initialized, params hold
// nothing but name, arguments and a _meta with at most a progressToken,
// and the name is a proxied tool in the catalog; anything else goes on to
// the SDK exactly as before. A taken call runs with router.Call.Raw set
// and is answered by the transport under the client's id, string or
// number, from the same write lock as the SDK's answers. It counts in the
// same open-request set that the end of input drains.
// notifications/cancelled naming a taken call cancels it; any other
// cancellation is the SDK's.
//
// Child side (stdio children, wire.go): the SDK's client and the raw
// calls share one connection. Requests go to the child's stdin through
// one lock (lockedStdin), which the SDK's transport also writes through,
// one Write per message, so lines never interleave. Each write must end
// within the child's request timeout: a child that takes none of its
// input for that long is stopped and restarted as a crashed one is, its
// calls settled, instead of blocking every later write for good. Ids never collide:
// the SDK numbers its requests with integers, raw calls use strings
// "evokore-fp-<n>". The stdout filter (jsonLines) offers each JSON line
// to the wire first; a response to one of our ids is read in place and
// handed to its call, and never reaches the SDK. Everything else
// (progress, logs, list_changed, sampling, elicitation, roots, the SDK's
// own responses) flows to the SDK untouched, so the progress routing,
// attribution and pass-through in forward.go apply to raw calls
// unchanged. Whoever takes an id out of the wire's pending set owns that
// call's outcome: the child's reader (the answer, or the end of the
// child's output: the died-during-call result) or the call itself (its
// request timeout or the client's cancel, after which it sends the child
// notifications/cancelled, on a goroutine of its own). A child's error
// object is returned as that JSON-RPC error. The result's top level is
// read for isError only (a repeated member as its last value, as the
// client's decoder reads it), which is all the pipeline reads: observers
// see a stand-in CallToolResult
// holding IsError, and the client gets the child's bytes unless a stage or
// middleware replaced the result (router.RawResult). HTTP children have no
// wire and go through the SDK's client; over streamable HTTP every call
// still goes through the SDK on the client side.
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

// Package proxy supervises the child MCP servers: it boots them in
// parallel after the client's handshake, registers their tools in the
// catalog as `<serverId>_<tool>`, forwards calls with a per-call timeout,
// passes progress, log messages and the children's own requests through
// to the calling client, notices a child's death the moment its
// connection closes, restarts it with capped exponential backoff, and on
// shutdown leaves no process behind (stdio children start through
// package procgroup). Supervisor.Reconfigure replaces the configured set
// after a reload, keeping unchanged children running and draining a
// removed or replaced child's calls before stopping it.
//
// A child is one goroutine that owns its connection (conn: its process
// or URL, and the SDK's client session over it); the rest of the router
// sees it only through the catalog and [Supervisor]'s methods. It makes
// no policy decisions: those run before a call reaches it.
//
// # How a call is carried
//
// This package is the child side. How a client's call reaches it (the
// stdio and HTTP transports, the byte path and the SDK path) is the
// caller side: see package ingress.
//
// A proxied tools/call reaches a child through its transport's one
// carrier, the line wire for a stdio child and the SDK's client over the
// child's http.Client for a streamable HTTP or SSE child; everything else
// goes through the SDK's client on the same connection (initialize,
// lists, prompts, resources, completions, subscriptions, log levels, and
// what the child sends besides its answers to the wire: notifications
// and its requests to the client). A child's own task (childtask.go)
// goes on the carrier too: the wire's lines, or a streamable HTTP
// child's poster, which POSTs what the SDK's client cannot send in that
// client's session (carrier.go).
//
// As net/http splits Client from RoundTripper, the carrier (carrier.go)
// only takes a call to the child and back; what the call means is read
// in call.go (the outcome the model reads: timeouts, a dead or stuck
// child, the child's own errors) and in the era adapter (era.go and
// dual.go), the one place that knows which protocol era a caller or a
// child's connection speaks. A remote child's authorization plugs into
// its http.Client, built in one place (httpTransport, carrier.go): the
// configured headers, then Options.Authorizer's OAuth handler (package
// childauth), which the SDK's streamable transport asks for a token on
// each request and on a 401 or 403, and which wraps the SSE transport's
// round tripper. A child that needs a user's login waits for one in its
// run loop (Authorizer.Changed), and a call to it asks its caller
// (authorize.go).
//
// The line wire (wire.go) writes each call as one line under an id of
// its own, "evokore-fp-<n>" (the SDK's client numbers its requests with
// integers), to the child's stdin through the one lock the SDK's
// transport also writes through (lockedStdin); each write must end within
// the request timeout, or the child is stopped and restarted as a crashed
// one is. The child's stdout goes through a filter (jsonLines, lines.go)
// that skips and logs lines that are not JSON or are over 16 MiB,
// answers a skipped line that reads as a response to one of our requests
// with an error under its id (so the call ends at once, saying why),
// repairs invalid UTF-8 as decoders read it, and offers each line to the
// wire first: a response to one of its ids never reaches the SDK.
// Whoever takes an id out of the wire's pending set owns that call's
// outcome: the child's reader (the answer, or the end of the output) or
// the call (its timeout or the client's cancel, after which it tells the
// child on a goroutine of its own).
//
// A result stays the bytes the child sent when the caller can send bytes
// (router.Call.Raw) and the result is complete: it is read for isError
// only, which is all the pipeline reads, and observers see a stand-in
// holding IsError. Otherwise it is decoded as the SDK's client decodes
// it. A child's log and progress messages written before its result
// reach the client before the result (noteOrder, order.go).
//
// # The hops of a call
//
// To a stdio child (both eras, either connection): CallTool, on the
// caller's goroutine, builds a toolRequest around the client's argument
// bytes and hands it to the wire; callLine copies them once into the
// line (twice when they hold a line break, which json.Compact takes
// out), and lockedStdin writes the line as it is when the pipe is idle.
// The answer is read on the goroutine the SDK's transport reads the
// child's stdout on: jsonLines copies the line once out of its bufio
// buffer, the wire takes it there, and the result, a slice of that line,
// goes on a channel to the call. A caller that takes bytes gets that
// slice (copied only to drop a new-era child's serverInfo); another
// gets it decoded once. Two goroutines, one copy each way. (Before the
// carriers, a retry with input, a new-era log level and a caller
// without bytes went through the SDK's client: two encodes of the
// arguments; the answer copied into its decoder and out as a message,
// decoded into a response and again into a result, and handed from its
// reader to its connection's reader goroutine, three goroutines.)
//
// To a streamable HTTP or SSE child: httpCarrier has the SDK's client
// send it (the arguments encoded into the params, the params into the
// message) with the child's http.Client (the configured headers clone
// the request) through net/http's write and read goroutines; the
// SDK reads the response body on a goroutine of its own, decodes the
// message, and its connection's reader goroutine hands the result to
// the call, which decodes it; five goroutines, as before the carriers.
//
// # What the SDK costs
//
// go-sdk v1.8.0's internal/json.Unmarshal builds a Decoder per message
// with a fresh 32 KiB buffer; a call through the SDK's client and server
// decoded nine times and cost 266 KB allocated per call in make
// bench-proxy, against 3.4 KB over the line wire from a client the
// transports answer themselves. Everything the wire leaves to the SDK
// still pays about 30 KB per decode: each progress or log message a
// child sends, and every call to an HTTP child.
package proxy

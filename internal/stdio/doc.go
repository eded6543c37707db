// Package stdio is the router's MCP transport over stdin and stdout: one
// JSON-RPC message per line, as the MCP stdio transport specifies, read so
// that no single frame can end the session. It is one of the router's two
// client transports, beside streamable HTTP (package httpsession); the two
// never import each other and reach the router only through
// ingress.Router.
//
// It owns stdio's framing and its one way in:
//
//   - FrameReader splits the input into lines of at most MaxFrame bytes,
//     skipping an overlong line without holding it;
//   - Transport/Conn implement the go-sdk's mcp.Transport and
//     mcp.Connection on top of it. Every frame is read by one goroutine:
//     a clean tools/call or notifications/cancelled (ingress.Scan) is
//     offered first to the byte path (Carry), which runs what the router
//     takes (ingress.Router.Take, the one rule) and answers it through
//     Conn.Reply with the client's id and the result as bytes; every other
//     frame goes to the SDK path, ingress.Decode turning it into a
//     jsonrpc.Message or answering it with the JSON-RPC error of a bad
//     frame (logged, and reading goes on). Both paths share the write
//     lock and the set of open request ids. A call the byte path takes
//     runs on the goroutine that read it; reading goes on on another, one
//     at a time;
//   - Transport.Open starts reading before a server is connected and
//     answers the client's initialize through a greeter while the server
//     is still being built; the server's own answer to it is dropped;
//   - Serve serves one client over a Transport: the router's view of it
//     on the SDK path, the byte path carrying what Router.Take takes.
//
// The go-sdk's own stdio connection stops reading at the first frame it
// cannot decode and the process then exits as if the client had left;
// this package exists to replace that behaviour.
//
// Serving the router over stdio (package server composes it so):
//
//	t := stdio.NewTransport(os.Stdin, os.Stdout, slog.Default())
//	err := stdio.Serve(ctx, t, router)
//
// It must not hold more than one frame in memory nor write anything to
// its output that is not a JSON-RPC message.
package stdio

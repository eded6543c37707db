// Package stdio is the router's MCP transport over stdin and stdout: one
// JSON-RPC message per line, as the MCP stdio transport specifies, read so
// that no single frame can end the session.
//
// It owns five small pieces, each usable alone:
//
//   - FrameReader splits the input into lines of at most MaxFrame bytes,
//     skipping an overlong line without holding it;
//   - Decode turns a frame into a jsonrpc.Message or a Rejection carrying
//     the JSON-RPC error to answer (-32700 parse error, -32600 invalid
//     request) and the id when it can be recovered;
//   - Transport/Conn implement the go-sdk's mcp.Transport and
//     mcp.Connection on top of them, answering each bad frame, logging
//     why, and reading on;
//   - Transport.Open starts reading before a server is connected and
//     answers the client's initialize through a greeter while the server
//     is still being built; the server's own answer to it is dropped;
//   - FastPath, when installed, is offered each clean tools/call and
//     notifications/cancelled on the reading goroutine, before the SDK
//     decodes it, and answers what it takes through Conn.Reply with the
//     client's id and the result as bytes (the router's proxied calls;
//     see package proxy). It shares the write lock and the open-request
//     set with the SDK's answers. A call it takes runs on the goroutine
//     that read it; reading goes on on another, one at a time.
//
// The go-sdk's own stdio connection stops reading at the first frame it
// cannot decode and the process then exits as if the client had left;
// this package exists to replace that behaviour.
//
// Serving a server over stdio:
//
//	t := stdio.NewTransport(os.Stdin, os.Stdout, slog.Default())
//	session, err := server.Connect(ctx, t, nil)
//
// It must not hold more than one frame in memory nor write anything to
// its output that is not a JSON-RPC message.
package stdio

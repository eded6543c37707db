package server

import (
	"log/slog"
	"os"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/handshake"
	"github.com/evokore/evokore/internal/stdio"
)

// identity is a session's server options as its initialize answer
// reports them (handshake.Options with the shipped instructions). It
// depends on no configuration, so the answer can be given before the
// configuration is read (Greeting).
func identity() *mcp.ServerOptions { return handshake.Options(instructions) }

// Greeting returns a function that answers an initialize request as a
// session of a server reporting version would, for stdio.Transport.Open:
// the router's handshake is then answered while the configuration, the
// policy and the catalog are still being built.
//
// The answer is the go-sdk's own (handshake.Answer), so protocol version
// negotiation and every field stay the SDK's; the session that connects
// later answers the same request again, and the transport checks the two
// agree. It returns nil (no early answer) if the exchange fails.
func Greeting(version string) func(*jsonrpc.Request) []byte {
	impl := &mcp.Implementation{Name: serverName, Version: version}
	return func(req *jsonrpc.Request) []byte {
		return handshake.Answer(impl, instructions, req)
	}
}

// OpenStdio opens the router's stdin and stdout as an MCP transport and
// starts reading at once: the client's initialize is answered by
// Greeting(version) while the server is still being built (New), and
// ServeStdio serves the rest. It is for serve, which has nothing else to
// read stdin.
func OpenStdio(version string, log *slog.Logger) *stdio.Transport {
	t := stdio.NewTransport(os.Stdin, os.Stdout, log)
	t.Open(Greeting(version))
	return t
}

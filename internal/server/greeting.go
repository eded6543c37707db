package server

//lint:file-ignore SA1019 logging passes through on purpose; see docs/decisions.md

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/stdio"
)

// identity is what a session's initialize answer says about the router:
// its instructions and capabilities. It depends on no configuration, so
// the answer can be given before the configuration is read (Greeting).
// Each call returns new options, for the caller to add its handlers to.
func identity() *mcp.ServerOptions {
	return &mcp.ServerOptions{
		Instructions: instructions,
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Logging:     &mcp.LoggingCapabilities{},
			Completions: &mcp.CompletionCapabilities{},
		},
	}
}

// greetingTimeout bounds the in-memory exchange of Greeting; it only
// fails to finish if the SDK misbehaves, and the server answers then.
const greetingTimeout = 2 * time.Second

// Greeting returns a function that answers an initialize request frame
// as a session of a server reporting version would, for
// stdio.Transport.Open: the router's handshake is then answered while
// the configuration, the policy and the catalog are still being built.
//
// The answer is the go-sdk's own, from a server with the sessions'
// identity and nothing registered, so protocol version negotiation and
// every field stay the SDK's; the session that connects later answers
// the same request again, and the transport checks the two agree. It
// returns nil (no early answer) if the exchange fails.
func Greeting(version string) func(frame []byte) []byte {
	return func(frame []byte) []byte {
		msg, err := jsonrpc.DecodeMessage(frame)
		if err != nil {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), greetingTimeout)
		defer cancel()
		ct, st := mcp.NewInMemoryTransports()
		ss, err := mcp.NewServer(&mcp.Implementation{Name: serverName, Version: version}, identity()).Connect(ctx, st, nil)
		if err != nil {
			return nil
		}
		defer ss.Close()
		conn, err := ct.Connect(ctx)
		if err != nil {
			return nil
		}
		defer conn.Close()
		if err := conn.Write(ctx, msg); err != nil {
			return nil
		}
		answer, err := conn.Read(ctx)
		if err != nil {
			return nil
		}
		if _, ok := answer.(*jsonrpc.Response); !ok {
			return nil
		}
		data, err := jsonrpc.EncodeMessage(answer)
		if err != nil {
			return nil
		}
		return data
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

package main

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addDeaf adds the -deaf tool and returns the stdio transport to serve
// with, stdin read through a gate the tool closes. The read in progress
// when deaf is called still returns (with what comes next); every later
// one blocks for good while the process keeps running, as a server stuck
// in a handler that never returns to its read loop: the router's writes
// then fill the pipe.
func addDeaf(s *mcp.Server) mcp.Transport {
	g := &deafStdin{deaf: make(chan struct{})}
	mcp.AddTool(s, &mcp.Tool{Name: "deaf", Description: "Stops reading stdin and never answers."}, func(ctx context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		g.once.Do(func() { close(g.deaf) })
		// Says so to a caller that can hear it: a test waits for this
		// rather than for a while.
		if token := req.Params.GetProgressToken(); token != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Message: "stopped reading stdin"})
		}
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	return &mcp.IOTransport{Reader: g, Writer: nopCloser{os.Stdout}}
}

type deafStdin struct {
	once sync.Once
	deaf chan struct{}
}

func (g *deafStdin) Read(p []byte) (int, error) {
	select {
	case <-g.deaf:
		for {
			time.Sleep(time.Hour) // a sleeper, so the runtime sees no deadlock
		}
	default:
		return os.Stdin.Read(p)
	}
}

func (g *deafStdin) Close() error { return os.Stdin.Close() }

// nopCloser leaves stdout open when the transport closes, as
// mcp.StdioTransport does.
type nopCloser struct{ *os.File }

func (nopCloser) Close() error { return nil }

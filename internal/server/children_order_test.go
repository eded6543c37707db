package server_test

//lint:file-ignore SA1019 a child's log messages pass through on purpose; see docs/decisions.md

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

// recorder notes the order of what a client reads: log messages, and
// "result" for every response.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *recorder) transport(t mcp.Transport) mcp.Transport { return recordingTransport{t, r} }

type recordingTransport struct {
	mcp.Transport
	r *recorder
}

func (t recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return recordingConn{c, t.r}, nil
}

type recordingConn struct {
	mcp.Connection
	r *recorder
}

func (c recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	c.r.mu.Lock()
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.Method == "notifications/message" {
			c.r.seen = append(c.r.seen, m.Method)
		}
	case *jsonrpc.Response:
		c.r.seen = append(c.r.seen, "result")
	}
	c.r.mu.Unlock()
	return msg, err
}

// A child's log messages for a call reach the client before the call's
// result, as they do without the router; and an elicitation form the
// go-sdk's client would refuse (SEP-1330's titled multi-select) reaches
// the user's client, which decides.
func TestChildLogBeforeResultAndEnumElicitation(t *testing.T) {
	h := routertest.New(t, map[string]any{"notes": contentChild(t, nil)}, nil)
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := h.Server.Connect(ctx, st); err != nil {
		t.Fatal(err)
	}
	var rec recorder
	var schema any
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) {},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, fmt.Errorf("not reached: the middleware answers")
		},
	})
	// The go-sdk's own client refuses this form too; a client that renders
	// it (the conformance suite's) is played by answering before the
	// SDK's check.
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if er, ok := req.(*mcp.ElicitRequest); ok && method == "elicitation/create" {
				schema = er.Params.RequestedSchema
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return next(ctx, method, req)
		}
	})
	cs, err := c.Connect(ctx, rec.transport(ct), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	h.Booted()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		rec.mu.Lock()
		rec.seen = nil
		rec.mu.Unlock()
		if got := routertest.Text(routertest.Call(t, cs, "notes_logs", map[string]any{"count": 3})); got != "logged 3" {
			t.Fatalf("notes_logs = %q", got)
		}
		rec.mu.Lock()
		seen := slices.Clone(rec.seen)
		rec.mu.Unlock()
		if want := []string{"notifications/message", "notifications/message", "notifications/message", "result"}; !slices.Equal(seen, want) {
			t.Fatalf("the client read %v, want the 3 log messages before the result", seen)
		}
	}

	if got := routertest.Text(routertest.Call(t, cs, "notes_elicit_enums", nil)); got != "action decline" {
		t.Errorf("notes_elicit_enums = %q", got)
	}
	if schema == nil || !strings.Contains(fmt.Sprint(schema), "titledMulti") {
		t.Errorf("the client was not asked with the child's form: %v", schema)
	}
}

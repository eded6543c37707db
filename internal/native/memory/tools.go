package memory

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/session"
)

// Register binds the memory tools to the stores under
// EVOKORE_HOME/memory (dir): the caller's tenant's, so a session id named
// by another tenant reaches another store (session.TenantDir).
func Register(t *native.Table, dir string, log *slog.Logger) {
	stores := &session.PerTenant[*Store]{Dir: dir, New: func(dir string) *Store {
		s := NewStore(dir)
		s.Log = log
		return s
	}}
	t.Bind(native.MemoryStore, ofCaller(stores, (*Store).storeTool))
	t.Bind(native.MemorySearch, ofCaller(stores, (*Store).searchTool))
	t.Bind(native.MemoryList, ofCaller(stores, (*Store).listTool))
}

// ofCaller runs h on the store of the calling session's tenant.
func ofCaller(stores *session.PerTenant[*Store], h func(*Store, context.Context, *native.Call) (*mcp.CallToolResult, error)) native.Handler {
	return func(ctx context.Context, call *native.Call) (*mcp.CallToolResult, error) {
		return h(stores.For(session.TenantOf(call.Session)), ctx, call)
	}
}

func invalidKind() *mcp.CallToolResult {
	return native.Errorf("Invalid 'kind'. Must be one of: %s", strings.Join(Kinds, ", "))
}

func (s *Store) storeTool(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		SessionID string          `json:"session_id"`
		Key       string          `json:"key"`
		Kind      string          `json:"kind"`
		Value     json.RawMessage `json:"value"`
		Tags      []string        `json:"tags"`
		TTLMs     *int64          `json:"ttl_ms"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	switch {
	case in.SessionID == "":
		return native.MissingArgument("session_id"), nil
	case in.Key == "":
		return native.MissingArgument("key"), nil
	case !slices.Contains(Kinds, in.Kind):
		return native.Errorf("Missing or invalid 'kind'. Must be one of: %s", strings.Join(Kinds, ", ")), nil
	case in.Value == nil:
		return native.MissingArgument("value"), nil
	}
	var ttl *time.Duration
	if in.TTLMs != nil {
		d := time.Duration(*in.TTLMs) * time.Millisecond
		ttl = &d
	}
	e, err := s.Put(in.SessionID, in.Key, in.Kind, in.Value, in.Tags, ttl)
	if err != nil {
		return native.Errorf("memory_store failed: %v", err), nil
	}
	return native.JSON(struct {
		Stored bool  `json:"stored"`
		Entry  Entry `json:"entry"`
	}{true, e}), nil
}

func (s *Store) searchTool(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		SessionID string   `json:"session_id"`
		Query     string   `json:"query"`
		Kind      *string  `json:"kind"`
		Tags      []string `json:"tags"`
		Limit     int      `json:"limit"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	if in.SessionID == "" {
		return native.MissingArgument("session_id"), nil
	}
	if in.Limit <= 0 {
		in.Limit = 20
	}
	q := Query{Text: in.Query, Tags: in.Tags, Limit: in.Limit}
	if in.Kind != nil {
		if !slices.Contains(Kinds, *in.Kind) {
			return invalidKind(), nil
		}
		q.Kind = *in.Kind
	}
	return s.answer(in.SessionID, q)
}

func (s *Store) listTool(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		SessionID string  `json:"session_id"`
		Kind      *string `json:"kind"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	if in.SessionID == "" {
		return native.MissingArgument("session_id"), nil
	}
	var q Query
	if in.Kind != nil {
		if !slices.Contains(Kinds, *in.Kind) {
			return invalidKind(), nil
		}
		q.Kind = *in.Kind
	}
	return s.answer(in.SessionID, q)
}

func (s *Store) answer(sessionID string, q Query) (*mcp.CallToolResult, error) {
	entries, err := s.Find(sessionID, q)
	if err != nil {
		return native.Errorf("reading memory failed: %v", err), nil
	}
	if entries == nil {
		entries = []Entry{}
	}
	return native.JSON(struct {
		Count   int     `json:"count"`
		Entries []Entry `json:"entries"`
	}{len(entries), entries}), nil
}

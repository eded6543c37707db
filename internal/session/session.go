// Package session holds the state the router keeps per client session:
// its id, its role, and the tools discovery activated for it. A session is
// shared by the session view that serves it and the pipeline that runs its
// calls; it knows nothing about transports.
package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Session is one client session.
type Session struct {
	// ID is stable for the session's life: "stdio-<uuid>" for stdio, the
	// Mcp-Session-Id over HTTP.
	ID string
	// Role is the RBAC role calls run under; "" means no role.
	Role string
	// Created is when the session started.
	Created time.Time
	// Peer is the client; nil until the session is connected.
	Peer Peer

	mu      sync.Mutex
	changed chan struct{}
}

// New starts a session.
func New(id, role string) *Session {
	return &Session{ID: id, Role: role, Created: time.Now(), changed: make(chan struct{})}
}

// NewID returns "<prefix>-<uuid v4>".
func NewID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return prefix + "-" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Changed is closed the next time the session's visible tools change.
func (s *Session) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// signalLocked wakes everyone waiting on Changed.
func (s *Session) signalLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Peer is the client end of a session, as the router needs it: to pass
// progress, log messages and a child's requests through to the client.
// *mcp.ServerSession implements it.
type Peer interface {
	NotifyProgress(ctx context.Context, params *mcp.ProgressNotificationParams) error
	Log(ctx context.Context, params *mcp.LoggingMessageParams) error
	CreateMessage(ctx context.Context, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	Elicit(ctx context.Context, params *mcp.ElicitParams) (*mcp.ElicitResult, error)
	ListRoots(ctx context.Context, params *mcp.ListRootsParams) (*mcp.ListRootsResult, error)
	InitializeParams() *mcp.InitializeParams
}

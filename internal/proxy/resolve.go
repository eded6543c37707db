package proxy

import (
	"context"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/evokore/evokore/internal/catalog"
)

// Resolve is asked about a tool name the catalog does not hold, and
// implements router.Resolver. A name under a configured server's prefix
// belongs to a child that is not ready: a model told "Unknown tool" would
// conclude the tool does not exist, so the call waits for a boot or a
// restart in progress (bounded by the boot timeout) and otherwise fails
// with why the server is down. A name under no server's prefix, or one a
// connected child does not serve, returns (nil, nil): unknown.
func (s *Supervisor) Resolve(ctx context.Context, name string) (*catalog.Entry, error) {
	c := s.owner(name)
	if c == nil {
		return s.resolveUnprefixed(ctx, name)
	}
	// A boot attempt is bounded twice by the boot timeout (connect, then
	// list), plus a moment to stop a process that did not make it; waiting
	// that long sees the attempt's own outcome rather than cutting it short.
	wait := 2*s.bootTimeout(c.spec) + time.Second
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		if e, ok := s.opts.Catalog.Snapshot().Lookup(name); ok {
			return e, nil
		}
		c.mu.Lock()
		state, lastErr, ever, gaveUp, changed := c.state, c.lastErr, c.everConnected, c.gaveUp, c.changed
		c.mu.Unlock()
		switch {
		case state == StatusDisabled:
			return nil, notReady(msgDisabled(c.spec.ID))
		case state == StatusConnected:
			return nil, nil
		case state == StatusError && (gaveUp || !ever):
			return nil, notReady(msgFailed(c.spec.ID, lastErr))
		}
		// Booting for the first time, or restarting after it went down.
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			if ever {
				return nil, notReady(MsgReconnecting(c.spec.ID))
			}
			return nil, notReady(msgStillBooting(c.spec.ID, wait))
		}
	}
}

// owner is the configured server whose tool-name prefix name carries; the
// longest prefix wins, so "git_hub_x" belongs to "git_hub" over "git". A
// server without a prefix owns no name it has not listed.
func (s *Supervisor) owner(name string) *child {
	var best *child
	for _, c := range s.children() {
		p := c.spec.NamePrefix()
		if p != "" && strings.HasPrefix(name, p) && len(name) > len(p) {
			if best == nil || len(p) > len(best.spec.NamePrefix()) {
				best = c
			}
		}
	}
	return best
}

// notReady is a child that cannot take the call now: -32603, the kind
// EVOKORE-MCP uses for its "reconnecting" error, never -32601.
func notReady(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
}

// resolveUnprefixed is Resolve for a name under no server's prefix: it
// may belong to a server configured without one ("prefix": "") that is
// still booting or restarting. The call waits for those boots (bounded as
// Resolve is) and is unknown once none of them is booting.
func (s *Supervisor) resolveUnprefixed(ctx context.Context, name string) (*catalog.Entry, error) {
	var candidates []*child
	wait := time.Duration(0)
	for _, c := range s.children() {
		if c.spec.NamePrefix() == "" && !c.spec.Disabled {
			candidates = append(candidates, c)
			wait = max(wait, 2*s.bootTimeout(c.spec)+time.Second)
		}
	}
	if len(candidates) == 0 {
		return nil, nil
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		if e, ok := s.opts.Catalog.Snapshot().Lookup(name); ok {
			return e, nil
		}
		var booting chan struct{}
		for _, c := range candidates {
			c.mu.Lock()
			if c.state == StatusBooting {
				booting = c.changed
			}
			c.mu.Unlock()
			if booting != nil {
				break
			}
		}
		if booting == nil {
			return nil, nil
		}
		select {
		case <-booting:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			return nil, nil
		}
	}
}

package proxy

//lint:file-ignore SA1019 roots pass through on purpose; see docs/decisions.md

import (
	"context"
	"net/url"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Whose roots a child gets. A child is shared by every client of the
// router, and a 2025-11-25 child keeps the roots it is told (it asks when
// it starts and after a list change, outside any call), so a caller's
// roots given to it would become every caller's allowed folders. So a
// child whose configuration names roots is told those, whoever calls;
// and when the router serves many clients (Options.ManyClients: serve
// --http) a child without configured roots is offered no roots at all.
// Only a router with one client for its life (stdio), whose children are
// that client's own, passes the client's roots on.

// callerRoots reports whether a caller's roots may reach server: the
// router has one client and the configuration names no roots for it.
func (s *Supervisor) callerRoots(server string) bool {
	if c, ok := s.child(server); ok && len(c.spec.Roots) > 0 {
		return false
	}
	return s.opts.ManyClients == nil || !s.opts.ManyClients()
}

// offersRoots reports whether server is told the router answers
// roots/list: it has configured roots, or gets its client's (caps).
func (s *Supervisor) offersRoots(server string, caps *mcp.ClientCapabilities) bool {
	if c, ok := s.child(server); ok && c.spec.PerCaller() && s.opts.ManyClients != nil && s.opts.ManyClients() {
		// The template of a per-caller server is nobody's: its
		// instances are offered their callers' roots (clientOptions).
		return len(c.spec.Roots) > 0
	}
	if c, ok := s.child(server); ok && len(c.spec.Roots) > 0 {
		return true
	}
	return s.callerRoots(server) && hasRoots(caps)
}

// configuredRoots answers server's roots/list with the roots its
// configuration names, as file URIs; none when it names none.
func (s *Supervisor) configuredRoots(server string) (*mcp.ListRootsResult, error) {
	out := &mcp.ListRootsResult{Roots: []*mcp.Root{}}
	c, ok := s.child(server)
	if !ok || len(c.spec.Roots) == 0 {
		return out, nil
	}
	spec, err := c.spec.Resolve(s.opts.Env)
	if err != nil {
		return nil, err
	}
	for _, dir := range spec.Roots {
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Clean(dir))}
		out.Roots = append(out.Roots, &mcp.Root{URI: u.String(), Name: filepath.Base(dir)})
	}
	return out, nil
}

// rootsMiddleware answers a child's roots/list: an instance's with its
// caller's roots; else with its configured roots, or, when its client's
// roots may reach it, with the client's (the SDK's client would answer
// from its own static list).
func (s *Supervisor) rootsMiddleware(c *child) mcp.Middleware {
	server := c.spec.ID
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "roots/list" {
				return next(ctx, method, req)
			}
			if c.inst != nil {
				return s.instanceRoots(ctx, c.inst)
			}
			if !s.callerRoots(server) {
				return s.configuredRoots(server)
			}
			peer, call, err := s.peerFor(server, "roots", true, hasRoots)
			if err != nil {
				return nil, err
			}
			ctx, cancel := callContext(call, ctx)
			defer cancel()
			return peer.ListRoots(ctx, &mcp.ListRootsParams{})
		}
	}
}

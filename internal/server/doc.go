// Package server is the router's composition root: it builds the shared
// parts (configuration, policy, catalog, natives, supervisor, pipeline)
// and serves them to clients through the two client transports, which it
// composes and owns neither of:
//
//	stdin/stdout ── stdio ───────┐
//	                             ├── ingress.Router ── Server: views, Take, pipeline
//	POST/GET /mcp ── httpsession ┘
//
// Server implements ingress.Router, the one interface both transports
// reach the router through: it builds each client's View (one mcp.Server
// per client session, fed from the shared catalog, supervisor and policy,
// plus resources, prompts and instructions; view.go), and applies the
// byte path's rule (Take, bytepath.go): the calls a transport may answer
// itself, as bytes, through the same pipeline as every call. ServeStdio
// and HTTP wire the two transports to it; neither knows the other, and
// neither imports this package.
//
// It also owns the configuration in force: one immutable generation of
// mcp.config.json and permissions.yml, replaced whole by Server.Reload
// (SIGHUP, the file watcher) when the new files validate; see reload.go.
//
// Nothing imports this package but the command (and the tests' harness).
package server

// Package server wires the router to the MCP SDK: one session view (an
// mcp.Server) per client session, fed from the shared catalog, supervisor
// and policy, plus resources, prompts and instructions.
//
// It also owns the configuration in force: one immutable generation of
// mcp.config.json and permissions.yml, replaced whole by Server.Reload
// (SIGHUP, the file watcher) when the new files validate; see reload.go.
//
// Nothing imports this package but the command.
package server

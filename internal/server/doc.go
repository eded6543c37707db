// Package server wires the router to the MCP SDK: one session view (an
// mcp.Server) per client session, fed from the shared catalog, supervisor
// and policy, plus resources, prompts and instructions.
//
// Nothing imports this package but the command.
package server

// Package connect puts evokore into an MCP client's configuration and
// takes it out again: the clients it knows and where each keeps its
// file on Linux, macOS and Windows, the evokore entry it writes, the
// move of the client's other servers into evokore's own config, and the
// record under EVOKORE_HOME that lets disconnect put them back.
//
// An import carries each server whole or not at all: remote servers
// become HTTP children, each client's variable syntax becomes evokore's
// ${NAME} or the server stays in the client with the place and the
// reason (vars.go, convert.go, codex.go), and evokore's entry passes on
// what the servers need from a client that filters its environment.
// Whatever connect prints of a file is masked first (mask.go).
//
// A client's file is edited in place (see jsondoc.go and tomldoc.go), so
// the keys evokore does not own, their order and the formatting stay as
// written. It owns the files under EVOKORE_HOME/connections and touches
// nothing else of a client's file than the one servers section.
package connect

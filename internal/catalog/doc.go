// Package catalog owns the merged tool catalog: native and proxied tools
// in one deterministic order, published as immutable snapshots that are
// swapped atomically, and projected through discovery profiles into what
// each session lists.
//
// It must not start processes, make policy decisions or know the wiring of
// the MCP server.
package catalog

// Package native holds the router's own tools: the generated table that
// declares them (tools_gen.go, from evokore.cue) and the handlers that run
// them, grouped by manager.
//
// The table is data: names, titles, annotations, descriptions and input
// schemas. Behaviour lives in hand-written handlers that managers register
// against table entries; the router core never names a manager.
package native

//go:generate go run ../../gen -root ../..

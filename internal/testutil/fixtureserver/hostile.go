package main

import "strings"

// serveHostile is the -hostile server: MCP over stdio, one message at a
// time, whose tools answer with lines a well-behaved server never writes.
// Each answer carries the request's id, as it is, wherever the tool puts
// it:
//
//	echo {message}       "Echo: <message>", a plain answer
//	badutf8 {}           a text result holding the bytes 0xff 0xfe,
//	                     which are not UTF-8 ("bad \xff\xfe byte")
//	notjson {}           a result line that is not JSON (an escape \x
//	                     that JSON does not have)
//	overlimit {bytes,    a text result of that many bytes, the id the
//	  idLast}            first member or, with idLast, the last
//	dupiserror {}        a result whose isError is given twice, false
//	                     then true (decoders keep the last)
//
// Every tool takes any arguments (the schemas declare none required).
func serveHostile() {
	var tools []any
	for _, name := range []string{"echo", "badutf8", "notjson", "overlimit", "dupiserror"} {
		tools = append(tools, map[string]any{"name": name, "description": "A hostile answer: " + name + ".",
			"inputSchema": map[string]any{"type": "object"}})
	}
	serveLines("hostile", tools, func(r *lineRequest) string {
		id, a := string(r.ID), r.Params.Arguments
		switch r.Params.Name {
		case "echo":
			return reply(r.ID, textResult("Echo: "+a.Message))
		case "badutf8":
			return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"bad ` + "\xff\xfe" + ` byte"}]}}`
		case "notjson":
			return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"bad \x escape"}]}}`
		case "overlimit":
			result := `"result":{"content":[{"type":"text","text":"` + strings.Repeat("y", a.Bytes) + `"}]}`
			if a.IDLast {
				return `{"jsonrpc":"2.0",` + result + `,"id":` + id + `}`
			}
			return `{"jsonrpc":"2.0","id":` + id + `,` + result + `}`
		case "dupiserror":
			return `{"jsonrpc":"2.0","id":` + id + `,"result":{"isError":false,"content":[{"type":"text","text":"failed, said last"}],"isError":true}}`
		}
		return unknownTool(r)
	})
}

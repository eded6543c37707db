package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
)

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
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
				Name            string `json:"name"`
				Arguments       struct {
					Message string `json:"message"`
					Bytes   int    `json:"bytes"`
					IDLast  bool   `json:"idLast"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.ID == nil {
			continue // notifications
		}
		id := string(msg.ID)
		var out string
		switch msg.Method {
		case "initialize":
			out = reply(id, map[string]any{"protocolVersion": msg.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "hostile", "version": "1.0.0"}})
		case "ping":
			out = reply(id, map[string]any{})
		case "tools/list":
			var tools []any
			for _, name := range []string{"echo", "badutf8", "notjson", "overlimit", "dupiserror"} {
				tools = append(tools, map[string]any{"name": name, "description": "A hostile answer: " + name + ".",
					"inputSchema": map[string]any{"type": "object"}})
			}
			out = reply(id, map[string]any{"tools": tools})
		case "tools/call":
			a := msg.Params.Arguments
			switch msg.Params.Name {
			case "echo":
				out = reply(id, textResult("Echo: "+a.Message))
			case "badutf8":
				out = `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"bad ` + "\xff\xfe" + ` byte"}]}}`
			case "notjson":
				out = `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"bad \x escape"}]}}`
			case "overlimit":
				result := `"result":{"content":[{"type":"text","text":"` + strings.Repeat("y", a.Bytes) + `"}]}`
				if a.IDLast {
					out = `{"jsonrpc":"2.0",` + result + `,"id":` + id + `}`
				} else {
					out = `{"jsonrpc":"2.0","id":` + id + `,` + result + `}`
				}
			case "dupiserror":
				out = `{"jsonrpc":"2.0","id":` + id + `,"result":{"isError":false,"content":[{"type":"text","text":"failed, said last"}],"isError":true}}`
			default:
				out = `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32602,"message":"unknown tool"}}`
			}
		default:
			out = `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32601,"message":"method not found"}}`
		}
		if _, err := os.Stdout.WriteString(out + "\n"); err != nil {
			return
		}
	}
}

func reply(id string, result any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "result": result})
	return string(b)
}

func textResult(text string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
}

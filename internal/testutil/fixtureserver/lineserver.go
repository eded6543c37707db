package main

import (
	"bufio"
	"encoding/json"
	"os"
)

// lineRequest is what a hand-rolled line server reads of a request.
type lineRequest struct {
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

// serveLines is MCP over stdio as a single-threaded server speaks it,
// without the SDK: it reads a line, answers it with a blocking write, and
// only then reads the next, so while nobody reads its stdout it reads no
// more of its stdin either. It answers initialize, ping and tools/list
// (tools) itself and tools/call with the whole line call returns;
// notifications and what is not JSON-RPC go unanswered.
func serveLines(server string, tools []any, call func(r *lineRequest) string) {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var r lineRequest
		if json.Unmarshal(line, &r) != nil || r.ID == nil {
			continue
		}
		var out string
		switch r.Method {
		case "initialize":
			out = reply(r.ID, map[string]any{"protocolVersion": r.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": server, "version": "1.0.0"}})
		case "ping":
			out = reply(r.ID, map[string]any{})
		case "tools/list":
			out = reply(r.ID, map[string]any{"tools": tools})
		case "tools/call":
			out = call(&r)
		default:
			out = `{"jsonrpc":"2.0","id":` + string(r.ID) + `,"error":{"code":-32601,"message":"method not found"}}`
		}
		if _, err := os.Stdout.WriteString(out + "\n"); err != nil {
			return
		}
	}
}

func reply(id json.RawMessage, result any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	return string(b)
}

// unknownTool is the answer to a call of a tool the server does not have.
func unknownTool(r *lineRequest) string {
	return `{"jsonrpc":"2.0","id":` + string(r.ID) + `,"error":{"code":-32602,"message":"unknown tool ` + r.Params.Name + `"}}`
}

func textResult(text string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
}

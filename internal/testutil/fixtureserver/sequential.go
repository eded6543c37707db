package main

import (
	"bufio"
	"encoding/json"
	"os"
)

// serveSequential is the -sequential server: MCP over stdio the way a
// single-threaded server speaks it, one message at a time. It reads a
// line, answers it with a blocking write, and only then reads the next,
// so while nobody reads its stdout it reads no more of its stdin either.
// It serves echo only.
func serveSequential() {
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
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.ID == nil {
			continue // notifications, and what is not JSON-RPC
		}
		var result any
		var rpcErr any
		switch msg.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": msg.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "sequential", "version": "1.0.0"}}
		case "ping":
			result = map[string]any{}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "echo", "description": "Echoes the message back.",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}}}}}
		case "tools/call":
			if msg.Params.Name == "echo" {
				result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "Echo: " + msg.Params.Arguments.Message}}}
			} else {
				rpcErr = map[string]any{"code": -32602, "message": "unknown tool " + msg.Params.Name}
			}
		default:
			rpcErr = map[string]any{"code": -32601, "message": "method not found"}
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": msg.ID}
		if rpcErr != nil {
			reply["error"] = rpcErr
		} else {
			reply["result"] = result
		}
		out, _ := json.Marshal(reply)
		if _, err := os.Stdout.Write(append(out, '\n')); err != nil {
			return
		}
	}
}

package main

// serveSequential is the -sequential server: MCP over stdio the way a
// single-threaded server speaks it, one message at a time. It reads a
// line, answers it with a blocking write, and only then reads the next,
// so while nobody reads its stdout it reads no more of its stdin either.
// It serves echo only.
func serveSequential() {
	echo := map[string]any{"name": "echo", "description": "Echoes the message back.",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"message": map[string]any{"type": "string"}}}}
	serveLines("sequential", []any{echo}, func(r *lineRequest) string {
		if r.Params.Name != "echo" {
			return unknownTool(r)
		}
		return reply(r.ID, textResult("Echo: "+r.Params.Arguments.Message))
	})
}

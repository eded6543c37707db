package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// endlessPages answers every tools/list and prompts/list with a page of
// n items and a cursor it has never given before, as a child that
// paginates without end (-endless-pages N).
func endlessPages(n int) mcp.Middleware {
	var served atomic.Int64
	desc := strings.Repeat("a page without end ", 5)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			page := served.Add(1)
			cursor := fmt.Sprintf("page-%d", page)
			switch method {
			case "tools/list":
				res := &mcp.ListToolsResult{NextCursor: cursor}
				for i := range n {
					res.Tools = append(res.Tools, &mcp.Tool{Name: fmt.Sprintf("t%d_%d", page, i), Description: desc,
						InputSchema: map[string]any{"type": "object"}})
				}
				return res, nil
			case "prompts/list":
				res := &mcp.ListPromptsResult{NextCursor: cursor}
				for i := range n {
					res.Prompts = append(res.Prompts, &mcp.Prompt{Name: fmt.Sprintf("p%d_%d", page, i), Description: desc})
				}
				return res, nil
			}
			return next(ctx, method, req)
		}
	}
}

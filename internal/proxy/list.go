package proxy

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What one of a child's lists (tools, prompts, resources, resource
// templates) may hold. A child picks its page sizes and cursors, so one
// that hands out a new cursor with every page would otherwise be read,
// and its pages kept, until the boot timeout: a fast child fills
// gigabytes in that time. The bounds sit far above any real server (the
// largest ones list a few hundred tools of a few KB each).
const (
	maxListItems = 10_000
	maxListBytes = 16 << 20 // encoded, summed over the items
	maxListPages = 1_000
)

// page fetches one page of a list: its items and the cursor of the next
// page ("" for none).
type page[T any] func(ctx context.Context, cursor string) (items []*T, next string, err error)

// collect reads every page of a child's list, or fails once the list
// passes a bound. What was read before an error is returned with it.
func collect[T any](ctx context.Context, what string, fetch page[T]) ([]*T, error) {
	var all []*T
	size := 0
	cursor := ""
	for pages := 1; ; pages++ {
		items, next, err := fetch(ctx, cursor)
		if err != nil {
			return all, fmt.Errorf("listing %s: %w", what, err)
		}
		for _, it := range items {
			b, err := json.Marshal(it)
			if err != nil {
				return all, err
			}
			size += len(b)
			if len(all) == maxListItems || size > maxListBytes {
				return all, fmt.Errorf("listing %s: more than %d of them or %d MiB; the rest was not read", what, maxListItems, maxListBytes>>20)
			}
			all = append(all, it)
		}
		if next == "" {
			return all, nil
		}
		if pages == maxListPages {
			return all, fmt.Errorf("listing %s: more than %d pages; the rest was not read", what, maxListPages)
		}
		cursor = next
	}
}

func toolPages(cs *mcp.ClientSession) page[mcp.Tool] {
	return func(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Tools, res.NextCursor, nil
	}
}

func promptPages(cs *mcp.ClientSession) page[mcp.Prompt] {
	return func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
		res, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Prompts, res.NextCursor, nil
	}
}

func resourcePages(cs *mcp.ClientSession) page[mcp.Resource] {
	return func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
		res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Resources, res.NextCursor, nil
	}
}

func templatePages(cs *mcp.ClientSession) page[mcp.ResourceTemplate] {
	return func(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
		res, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.ResourceTemplates, res.NextCursor, nil
	}
}

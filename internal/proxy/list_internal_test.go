package proxy

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pagesOf serves pages of n tools with descriptions of size bytes, for
// at most last pages (0: without end).
func pagesOf(n, size, last int) (page[mcp.Tool], *int) {
	served := 0
	return func(_ context.Context, cursor string) ([]*mcp.Tool, string, error) {
		served++
		var tools []*mcp.Tool
		for i := range n {
			tools = append(tools, &mcp.Tool{Name: "t" + strconv.Itoa(served) + "_" + strconv.Itoa(i), Description: strings.Repeat("d", size)})
		}
		if served == last {
			return tools, "", nil
		}
		return tools, "c" + strconv.Itoa(served), nil
	}, &served
}

func TestCollectStopsAtEachBound(t *testing.T) {
	for _, c := range []struct {
		name           string
		n, size, last  int
		want           string // "" for no error
		wantRead, upTo int
	}{
		{"a list within the bounds", 100, 10, 50, "", 5000, 50},
		{"items", 100, 10, 0, "more than 10000 of them", maxListItems, 101},
		{"bytes", 10, 1 << 20, 0, "16 MiB", 15, 2},
		{"empty pages", 0, 0, 0, "more than 1000 pages", 0, maxListPages},
	} {
		t.Run(c.name, func(t *testing.T) {
			fetch, served := pagesOf(c.n, c.size, c.last)
			got, err := collect(context.Background(), "tools", fetch)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if len(got) != c.wantRead || *served != c.upTo {
				t.Errorf("read %d items over %d pages, want %d over %d", len(got), *served, c.wantRead, c.upTo)
			}
		})
	}
}

func TestCollectNamesWhatFailed(t *testing.T) {
	_, err := collect(context.Background(), "prompts", func(context.Context, string) ([]*mcp.Prompt, string, error) {
		return nil, "", errors.New("method not found")
	})
	if err == nil || err.Error() != "listing prompts: method not found" {
		t.Fatalf("error %v", err)
	}
}

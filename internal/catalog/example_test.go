package catalog_test

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
)

// A store holds the merged catalog; each change publishes a new immutable
// snapshot. A profile projects a snapshot to what a session lists, and
// discovery searches the whole snapshot for what the profile hides.
func Example() {
	store := catalog.NewStore(nil, []string{"fs", "github"})
	object := map[string]any{"type": "object"}
	store.SetServerTools("fs", []*mcp.Tool{
		{Name: "read_file", Description: "Read a file from disk", InputSchema: object},
		{Name: "write_file", Description: "Write a file to disk", InputSchema: object},
	})
	store.SetServerTools("github", []*mcp.Tool{
		{Name: "create_issue", Description: "Open an issue in a GitHub repository", InputSchema: object},
	})
	snap := store.Snapshot()

	// A profile that lists one proxied tool by name.
	reader := &catalog.Profile{Name: "reader", Visibility: catalog.VisibleList, Proxied: []string{"fs_read_file"}}
	for _, e := range snap.Project(reader, false, nil) {
		fmt.Println("listed:", e.Name)
	}
	// Discovery finds the hidden ones, typos included.
	for _, m := range snap.Search("file wirte", 1) {
		fmt.Println("found:", m.Entry.Name)
	}
	// Output:
	// listed: fs_read_file
	// found: fs_write_file
}

package config_test

import (
	"fmt"

	"github.com/evokore/evokore/internal/config"
)

// ParseMCPConfig reads an mcp.config.json from bytes. A server with a
// problem is reported at file:line:col and the rest still load.
func ExampleParseMCPConfig() {
	src := []byte(`{
  "servers": {
    "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
    "gh": {"command": "github-mcp", "timeout": "soon"}
  }
}`)
	cfg, ds := config.ParseMCPConfig("mcp.config.json", src)
	if ds != nil {
		fmt.Println(ds) // problems outside the servers: nothing loads
		return
	}
	for _, s := range cfg.Servers {
		if s.Invalid != "" {
			fmt.Println("server", s.ID, "will not start:")
			continue
		}
		fmt.Println("server", s.ID, "runs", s.Command)
	}
	for _, d := range cfg.ServerProblems {
		fmt.Println(d)
	}
	// Output:
	// server fs runs npx
	// server gh will not start:
	// mcp.config.json:4:38: error: servers.gh.timeout: field not allowed [schema]
}

package hooks_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/hooks"
)

// testdata/evokore-mcp-evidence.jsonl was written by a short Node script
// following EVOKORE-MCP's evidence hook: JSON.stringify of each entry,
// proof_hash the SHA-256 of JSON.stringify({agentId, toolName, toolInput,
// prevHash}) with tool_input in the order the tool gave its keys (not
// sorted) and JavaScript's escapes (`<`, `&` as they are), and an
// edit-trace line after which the chain starts again from 64 zeros.
const legacyChain = "testdata/evokore-mcp-evidence.jsonl"

func writeChain(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s-evidence.jsonl")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestEvokoreMCPChainsVerify(t *testing.T) {
	data, err := os.ReadFile(legacyChain)
	if err != nil {
		t.Fatal(err)
	}
	n, err := hooks.VerifyEvidence(writeChain(t, string(data)))
	if err != nil || n != 4 {
		t.Fatalf("EVOKORE-MCP's chain: %d links, %v; want 4 links intact", n, err)
	}

	// Still tamper-evident: one changed character in a tool input, or a
	// link that starts again from zeros where no edit trace stands
	// before it, breaks the chain at that line.
	lines := strings.SplitAfter(string(data), "\n")
	for name, c := range map[string]struct {
		text string
		line int
	}{
		"an altered input": {strings.Replace(string(data), `a = 2`, `a = 3`, 1), 4},
		"a dropped trace":  {lines[0] + lines[1] + lines[3] + lines[4], 3},
	} {
		_, err := hooks.VerifyEvidence(writeChain(t, c.text))
		var ce *hooks.ChainError
		if !errors.As(err, &ce) || ce.Line != c.line {
			t.Errorf("%s: %v, want a broken chain at line %d", name, err, c.line)
		}
	}
}

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
)

func TestCommittedTablesAreCurrent(t *testing.T) {
	root := testutil.Root(t)
	if err := run(filepath.Join(root, "evokore.cue"), root, true); err != nil {
		t.Fatalf("generated files are stale: %v", err)
	}
}

func TestGenerationIsDeterministic(t *testing.T) {
	root := testutil.Root(t)
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if err := run(filepath.Join(root, "evokore.cue"), dir, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range outputs {
		x, _ := os.ReadFile(filepath.Join(a, o.path))
		y, _ := os.ReadFile(filepath.Join(b, o.path))
		if string(x) != string(y) || len(x) == 0 {
			t.Errorf("%s differs between two runs", o.path)
		}
		if !strings.HasPrefix(string(x), "// "+header) && !strings.Contains(string(x), regionBegin) {
			t.Errorf("%s lacks the generated-code header", o.path)
		}
	}
}

func TestBrokenSourceFailsWithPosition(t *testing.T) {
	root := testutil.Root(t)
	src, err := os.ReadFile(filepath.Join(root, "evokore.cue"))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(src), `required: ["runId"]`, `requried: ["runId"]`, 1)
	path := testutil.WriteFile(t, t.TempDir(), "evokore.cue", bad)
	err = run(path, t.TempDir(), false)
	if err == nil || !strings.Contains(err.Error(), "evokore.cue:") || !strings.Contains(err.Error(), "requried: field not allowed") {
		t.Fatalf("err = %v", err)
	}
}

// TestTitleChangeReachesClients regenerates the tables from an edited
// evokore.cue, builds the router with them (go build -overlay, so the
// repository is untouched) and checks what tools/list reports.
func TestTitleChangeReachesClients(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the router: not in -short")
	}
	root := testutil.Root(t)
	src, err := os.ReadFile(filepath.Join(root, "evokore.cue"))
	if err != nil {
		t.Fatal(err)
	}
	const before, after = `title:       "Describe Tool"`, `title:       "Look Up Tool Schemas"`
	if !strings.Contains(string(src), before) {
		t.Fatalf("evokore.cue no longer has %s", before)
	}
	tmp := t.TempDir()
	edited := testutil.WriteFile(t, tmp, "evokore.cue", strings.Replace(string(src), before, after, 1))
	out := filepath.Join(tmp, "out")
	if err := run(edited, out, false); err != nil {
		t.Fatal(err)
	}
	overlay := map[string]map[string]string{"Replace": {}}
	for _, o := range outputs {
		if strings.HasSuffix(o.path, ".go") {
			overlay["Replace"][filepath.Join(root, o.path)] = filepath.Join(out, o.path)
		}
	}
	overlayFile := testutil.WriteJSON(t, tmp, "overlay.json", overlay)
	bin := filepath.Join(tmp, "evokore")
	build := exec.Command("go", "build", "-overlay", overlayFile, "-o", bin, "./cmd/evokore")
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}

	title := func(bin string) string {
		cmd := exec.Command(bin, "serve")
		cmd.Dir = tmp
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + tmp, "EVOKORE_HOME=" + filepath.Join(tmp, "home")}
		c := mcp.NewClient(&mcp.Implementation{Name: "gen-test", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			if tl.Name == "describe_tool" {
				return tl.Title
			}
		}
		raw, _ := json.Marshal(res)
		t.Fatalf("describe_tool not listed: %s", raw)
		return ""
	}
	if got := title(testutil.Evokore(t)); got != "Describe Tool" {
		t.Errorf("the committed build reports %q", got)
	}
	if got := title(bin); got != "Look Up Tool Schemas" {
		t.Errorf("after regenerating, the router reports %q", got)
	}
}

package nav_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native/nav"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// project is a router whose project directory is the harness's folder,
// with a client on it: the tools read files there only.
func project(t *testing.T, env map[string]string) (*routertest.Harness, *mcp.ClientSession) {
	t.Helper()
	h := routertest.New(t, map[string]any{}, env)
	if h.Settings.ProjectDir != h.Dir {
		t.Fatalf("project directory %q, want the harness's %q", h.Settings.ProjectDir, h.Dir)
	}
	return h, h.Connect(nil)
}

// fixture copies the anchored sample into the project and returns its
// path there.
func fixture(t *testing.T, h *routertest.Harness) string {
	t.Helper()
	b, err := os.ReadFile("testdata/service.go.txt")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(h.Dir, "service.go")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGetMap(t *testing.T) {
	h, cs := project(t, nil)
	path := fixture(t, h)
	text, isErr := routertest.CallText(t, cs, "nav_get_map", map[string]any{"path": path})
	if isErr {
		t.Fatal(text)
	}
	var m nav.Map
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	if m.File != path || m.TotalLines != 22 || m.AnchorCount != 11 || len(m.Anchors) != 11 {
		t.Errorf("file %q, %d lines, %d anchors", m.File, m.TotalLines, m.AnchorCount)
	}
	if a := m.Anchors[1]; a != (nav.Anchor{ID: "new-import", Type: "INS", Line: 6, Description: "add new imports here"}) {
		t.Errorf("second anchor = %+v", a)
	}
	if a := m.Anchors[2]; a.Type != "END" || a.ID != "imports" || a.Description != "" {
		t.Errorf("END anchor = %+v", a)
	}
	want := []nav.Section{
		{ID: "imports", StartLine: 3, EndLine: 8, LineCount: 6, Description: "imports and types",
			InsertPoints: []nav.InsertPoint{{ID: "new-import", Line: 6, Description: "add new imports here"}}},
		{ID: "handlers", StartLine: 10, EndLine: 15, LineCount: 6, Description: "HTTP handlers",
			InsertPoints: []nav.InsertPoint{{ID: "new-handler", Line: 13, Description: "register a new handler below"}}},
	}
	got, _ := json.Marshal(m.Sections)
	wantJSON, _ := json.Marshal(want)
	if string(got) != string(wantJSON) {
		t.Errorf("sections =\n%s\nwant\n%s", got, wantJSON)
	}
	wantWarnings := []string{
		"Duplicate anchor 'INS:new-handler' appears 2 times",
		"Unpaired SEC 'orphan' has no matching END",
		"Unpaired END 'stray' has no matching SEC",
		"END 'backwards' at line 20 comes before its SEC at line 22; section skipped",
	}
	if !slices.Equal(m.Warnings, wantWarnings) {
		t.Errorf("warnings =\n%s\nwant\n%s", strings.Join(m.Warnings, "\n"), strings.Join(wantWarnings, "\n"))
	}
}

func TestGetMapOfAFileWithoutAnchors(t *testing.T) {
	h, cs := project(t, nil)
	p := filepath.Join(h.Dir, "plain.txt")
	if err := os.WriteFile(p, []byte("one\r\ntwo\r\nthree"), 0o644); err != nil {
		t.Fatal(err)
	}
	text, isErr := routertest.CallText(t, cs, "nav_get_map", map[string]any{"path": p})
	want := fmt.Sprintf("{\n  \"file\": %q,\n  \"total_lines\": 3,\n  \"anchor_count\": 0,\n  \"anchors\": [],\n  \"sections\": [],\n  \"warnings\": []\n}", p)
	if isErr || text != want {
		t.Errorf("map = %s\nwant %s", text, want)
	}
}

func TestReadAnchor(t *testing.T) {
	h, cs := project(t, nil)
	path := fixture(t, h)
	text, isErr := routertest.CallText(t, cs, "nav_read_anchor", map[string]any{"path": path, "anchor_id": "new-import", "lines_before": 2, "lines_after": 1})
	if isErr {
		t.Fatal(text)
	}
	var w nav.Window
	if err := json.Unmarshal([]byte(text), &w); err != nil {
		t.Fatal(err)
	}
	wantContent := "4:\timport (\n5:\t\t\"context\"\n6:\t\t// @AI:NAV[INS:new-import] add new imports here\n7:\t)"
	if w.File != path || w.AnchorID != "new-import" || w.AnchorType != "INS" || w.AnchorLine != 6 ||
		w.Window.StartLine != 4 || w.Window.EndLine != 7 || w.Window.LineCount != 4 || w.Content != wantContent {
		t.Errorf("window = %s", text)
	}

	// Defaults are 20 before and 10 after, clipped by the file.
	text, _ = routertest.CallText(t, cs, "nav_read_anchor", map[string]any{"path": path, "anchor_id": "handlers"})
	w = nav.Window{}
	_ = json.Unmarshal([]byte(text), &w)
	if w.AnchorType != "SEC" || w.AnchorLine != 10 || w.Window.StartLine != 1 || w.Window.EndLine != 20 || w.Window.LineCount != 20 ||
		!strings.HasPrefix(w.Content, "1:\tpackage service\n") {
		t.Errorf("default window = %s", text)
	}

	// anchor_type picks among anchors sharing an id; the first match wins.
	text, _ = routertest.CallText(t, cs, "nav_read_anchor", map[string]any{"path": path, "anchor_id": "handlers", "anchor_type": "END", "lines_before": 0, "lines_after": 0})
	w = nav.Window{}
	_ = json.Unmarshal([]byte(text), &w)
	if w.AnchorType != "END" || w.AnchorLine != 15 || w.Window.LineCount != 1 || w.Content != "15:\t// @AI:NAV[END:handlers]" {
		t.Errorf("END window = %s", text)
	}
}

func TestReadAnchorWindowIsCappedAt500(t *testing.T) {
	h, cs := project(t, nil)
	var b strings.Builder
	for i := 1; i <= 1500; i++ {
		if i == 700 {
			b.WriteString("// @AI:NAV[INS:middle] here\n")
			continue
		}
		fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", i%7))
	}
	// A line longer than any default scanner buffer.
	b.WriteString(strings.Repeat("y", 200_000) + "\n")
	p := filepath.Join(h.Dir, "big.txt")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	text, isErr := routertest.CallText(t, cs, "nav_read_anchor", map[string]any{"path": p, "anchor_id": "middle", "lines_before": 500, "lines_after": 500})
	if isErr {
		t.Fatal(text)
	}
	var w nav.Window
	_ = json.Unmarshal([]byte(text), &w)
	if w.Window.StartLine != 200 || w.Window.EndLine != 1200 || w.Window.LineCount != 1001 ||
		!strings.HasPrefix(w.Content, "200:\tline 200 ") || !strings.HasSuffix(w.Content, "\n1200:\tline 1200 xxx") {
		t.Errorf("window = %+v", w.Window)
	}
	// Past the cap the window is clamped, and negative sizes mean none.
	text, isErr = routertest.CallText(t, cs, "nav_read_anchor", map[string]any{"path": p, "anchor_id": "middle", "lines_before": 5000, "lines_after": -3})
	w = nav.Window{}
	_ = json.Unmarshal([]byte(text), &w)
	if isErr || w.Window.StartLine != 200 || w.Window.EndLine != 700 || w.Window.LineCount != 501 {
		t.Errorf("lines_before 5000, lines_after -3 = %v %+v", isErr, w.Window)
	}
	f, _ := os.Open(p)
	defer f.Close()
	win, found, err := nav.ReadWindow(p, f, "middle", "", 10_000, -5)
	if err != nil || !found || win.Window.StartLine != 200 || win.Window.LineCount != 501 {
		t.Errorf("ReadWindow clamps: %+v %v %v", win, found, err)
	}
	text, _ = routertest.CallText(t, cs, "nav_get_map", map[string]any{"path": p})
	var m nav.Map
	_ = json.Unmarshal([]byte(text), &m)
	if m.TotalLines != 1501 || m.AnchorCount != 1 {
		t.Errorf("map of the big file: %d lines, %d anchors", m.TotalLines, m.AnchorCount)
	}
}

func TestNavErrors(t *testing.T) {
	h, cs := project(t, nil)
	path := fixture(t, h)
	missing := filepath.Join(h.Dir, "nope.txt")
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"nav_read_anchor", map[string]any{"path": path, "anchor_id": "no-such"}, "Anchor 'no-such' not found in " + path + ". Run nav_get_map to see available anchors."},
		{"nav_read_anchor", map[string]any{"path": path, "anchor_id": "new-import", "anchor_type": "SEC"}, "Anchor 'new-import' not found in " + path + ". Run nav_get_map to see available anchors."},
		{"nav_get_map", map[string]any{"path": missing}, "File not found or not readable: " + missing},
		{"nav_read_anchor", map[string]any{"path": missing, "anchor_id": "x"}, "File not found or not readable: " + missing},
		{"nav_get_map", map[string]any{"path": "testdata/service.go.txt"}, "Path must be absolute: testdata/service.go.txt"},
		{"nav_get_map", map[string]any{"path": filepath.Dir(path)}, "File not found or not readable: " + filepath.Dir(path)},
		{"nav_get_map", map[string]any{"path": ""}, "Missing required argument: path"},
		{"nav_read_anchor", map[string]any{"path": "", "anchor_id": "x"}, "Missing required argument: path"},
		{"nav_read_anchor", map[string]any{"path": path, "anchor_id": ""}, "Missing required argument: anchor_id"},
	}
	for _, c := range cases {
		if text, isErr := routertest.CallText(t, cs, c.tool, c.args); !isErr || text != c.want {
			t.Errorf("%s %v = %v %q\nwant %q", c.tool, c.args, isErr, text, c.want)
		}
	}
}

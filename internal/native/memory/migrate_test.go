package memory_test

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/native/memory"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// originalSchema is the table EVOKORE-MCP's node:sqlite backend creates,
// written out here so the test does not lean on the store's own copy.
const originalSchema = `CREATE TABLE memories (
  id TEXT PRIMARY KEY, session_id TEXT NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL,
  value TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  expires_at INTEGER, tags TEXT DEFAULT '[]', UNIQUE(session_id, key));
CREATE INDEX idx_session ON memories(session_id);
CREATE INDEX idx_expires ON memories(expires_at);`

func TestTheOriginalsSQLiteMemoryIsListedAndSearchable(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	dir := filepath.Join(home, "memory")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// The original names the file after the id with "/" and " " made "_".
	db, err := sql.Open("sqlite", filepath.Join(dir, "agent_7_main.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(originalSchema); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	rows := []struct {
		sid, key, kind, value, tags string
		updated                     int64
		expires                     any
	}{
		{"agent/7 main", "deploy-target", "decision", `{"host":"build-01","port":8443}`, `["ops","deploy"]`, now - 3000, nil},
		{"agent/7 main", "last-error", "error", `"connection refused by build-01"`, `["ops"]`, now - 2000, now + 3600000},
		{"agent/7 main", "scratch", "working", `"long gone"`, `[]`, now - 7200000, now - 3600000},
		// A row of an id that sanitises to the same file name.
		{"agent_7 main", "other-session", "knowledge", `"not yours"`, `[]`, now - 1000, nil},
	}
	for _, r := range rows {
		if _, err := db.Exec(`INSERT INTO memories (id, session_id, key, kind, value, created_at, updated_at, expires_at, tags) VALUES (?,?,?,?,?,?,?,?,?)`,
			memory.ID(r.sid, r.key), r.sid, r.key, r.kind, r.value, r.updated-500, r.updated, r.expires, r.tags); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_HOME": home})
	cs := h.Connect(nil)
	text, isErr := routertest.CallText(t, cs, "memory_list", map[string]any{"session_id": "agent/7 main"})
	list := routertest.DecodeJSON[answer](t, text)
	if isErr || strings.Join(keys(list), ",") != "last-error,deploy-target" {
		t.Fatalf("memory_list of the original's file = %v %s", isErr, text)
	}
	d := list.Entries[1]
	if d.ID != memory.ID("agent/7 main", "deploy-target") || compact(t, d.Value) != `{"host":"build-01","port":8443}` ||
		strings.Join(d.Tags, ",") != "ops,deploy" || d.ExpiresAt != nil || d.UpdatedAt != now-3000 || d.CreatedAt != now-3500 {
		t.Errorf("entry read back = %+v", d)
	}
	text, _ = routertest.CallText(t, cs, "memory_search", map[string]any{"session_id": "agent/7 main", "query": "BUILD-01", "tags": []string{"deploy"}})
	if got := keys(routertest.DecodeJSON[answer](t, text)); strings.Join(got, ",") != "deploy-target" {
		t.Errorf("memory_search = %v", got)
	}

	// Storing into it keeps the original's table, readable by sqlite3.
	if text, isErr := routertest.CallText(t, cs, "memory_store", map[string]any{"session_id": "agent/7 main", "key": "deploy-target", "kind": "decision", "value": "build-02"}); isErr {
		t.Fatal(text)
	}
	sqlite3, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("sqlite3 is not on PATH; the file was not inspected with it")
	}
	out, err := exec.Command(sqlite3, filepath.Join(dir, "agent_7_main.db"),
		"SELECT session_id || '|' || key || '|' || value || '|' || created_at FROM memories ORDER BY session_id, key").CombinedOutput()
	want := fmt.Sprintf("agent/7 main|deploy-target|\"build-02\"|%d\nagent/7 main|last-error|\"connection refused by build-01\"|%d\nagent_7 main|other-session|\"not yours\"|%d\n",
		now-3500, now-2500, now-1500)
	if err != nil || string(out) != want {
		t.Errorf("sqlite3 sees (%v):\n%s\nwant:\n%s", err, out, want)
	}
}

func TestTheOriginalsJSONMemoryIsImported(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	dir := filepath.Join(home, "memory")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	// As the original's JSON backend writes it: an indented array.
	store := fmt.Sprintf(`[
  {"id": "x", "session_id": "s-json", "key": "style", "kind": "knowledge", "value": {"indent": "tabs"},
   "tags": ["fmt"], "created_at": %[1]d, "updated_at": %[1]d, "expires_at": null},
  {"id": "y", "session_id": "s-json", "key": "todo", "kind": "task", "value": "review PR 12",
   "tags": [], "created_at": %[2]d, "updated_at": %[2]d, "expires_at": %[3]d},
  {"session_id": "s-json", "key": "bad-kind", "kind": "gossip", "value": 1},
  "not an entry"
]`, now-5000, now-4000, now+60000)
	file := filepath.Join(dir, "s-json.json")
	if err := os.WriteFile(file, []byte(store), 0o600); err != nil {
		t.Fatal(err)
	}

	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_HOME": home})
	cs := h.Connect(nil)
	text, isErr := routertest.CallText(t, cs, "memory_search", map[string]any{"session_id": "s-json", "query": "tabs"})
	if got := keys(routertest.DecodeJSON[answer](t, text)); isErr || strings.Join(got, ",") != "style" {
		t.Fatalf("memory_search over the JSON store = %v %s", isErr, text)
	}
	text, _ = routertest.CallText(t, cs, "memory_list", map[string]any{"session_id": "s-json"})
	list := routertest.DecodeJSON[answer](t, text)
	if strings.Join(keys(list), ",") != "todo,style" || list.Entries[0].ID != memory.ID("s-json", "todo") ||
		list.Entries[0].ExpiresAt == nil || *list.Entries[0].ExpiresAt != now+60000 {
		t.Errorf("memory_list = %s", text)
	}
	if !strings.Contains(h.Stderr.String(), "[EVOKORE] Imported memory entries; the file is kept entries=2 file="+file+"\n") {
		t.Errorf("stderr does not report the import:\n%s", h.Stderr.String())
	}
	// The JSON file is kept as it was; new writes go to the database.
	if b, err := os.ReadFile(file); err != nil || string(b) != store {
		t.Errorf("the JSON store changed: %v", err)
	}
	routertest.CallText(t, cs, "memory_store", map[string]any{"session_id": "s-json", "key": "new", "kind": "context", "value": 1})
	text, _ = routertest.CallText(t, cs, "memory_list", map[string]any{"session_id": "s-json"})
	if got := keys(routertest.DecodeJSON[answer](t, text)); len(got) != 3 {
		t.Errorf("after a write = %v", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "s-json.db")); err != nil {
		t.Errorf("no database beside the JSON store: %v", err)
	}
}

// Two routers sharing EVOKORE_HOME write the same session at once: every
// write lands, none fails on the other's lock.
func TestTwoStoresWriteOneSessionConcurrently(t *testing.T) {
	dir := t.TempDir()
	stores := []*memory.Store{memory.NewStore(dir), memory.NewStore(dir)}
	const each = 40
	var wg sync.WaitGroup
	errs := make(chan error, 2*each)
	for n, s := range stores {
		wg.Go(func() {
			for i := range each {
				if _, err := s.Put("shared", fmt.Sprintf("r%d-%02d", n, i), "knowledge", []byte(`"v"`), nil, nil); err != nil {
					errs <- err
				}
				if _, err := s.Find("shared", memory.Query{}); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	all, err := stores[0].Find("shared", memory.Query{})
	if err != nil || len(all) != 2*each {
		t.Errorf("entries = %d, %v; want %d", len(all), err, 2*each)
	}
}

// The same across processes, as two routers are: SQLite's file locks, not
// this process's mutex, keep them in step.
func TestTwoProcessesWriteOneSessionConcurrently(t *testing.T) {
	dir := t.TempDir()
	const each = 40
	var cmds []*exec.Cmd
	for n := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryWriterProcess$")
		cmd.Env = append(os.Environ(), "EVOKORE_TEST_MEMORY_WRITER="+dir, fmt.Sprintf("EVOKORE_TEST_MEMORY_WRITER_ID=p%d", n))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("writer %d:\n%s", n, out.String())
			}
		})
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer: %v", err)
		}
	}
	all, err := memory.NewStore(dir).Find("shared", memory.Query{})
	if err != nil || len(all) != 2*each {
		t.Errorf("entries = %d, %v; want %d", len(all), err, 2*each)
	}
}

// TestMemoryWriterProcess is the writer the test above starts twice.
func TestMemoryWriterProcess(t *testing.T) {
	dir := os.Getenv("EVOKORE_TEST_MEMORY_WRITER")
	if dir == "" {
		t.Skip("run by TestTwoProcessesWriteOneSessionConcurrently")
	}
	s := memory.NewStore(dir)
	for i := range 40 {
		key := fmt.Sprintf("%s-%02d", os.Getenv("EVOKORE_TEST_MEMORY_WRITER_ID"), i)
		if _, err := s.Put("shared", key, "knowledge", []byte(`"v"`), nil, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Find("shared", memory.Query{}); err != nil {
			t.Fatal(err)
		}
	}
}

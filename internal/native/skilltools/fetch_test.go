package skilltools_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

const remoteSkill = "---\nname: remote-lint\ndescription: Lint a repository fetched from afar.\ncategory: Fetched\n---\n\n# Remote lint\n\nRun the linters.\n"

// skillServer serves skill files and counts the requests that reached it.
func skillServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/skills/remote-lint/SKILL.md", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, remoteSkill) })
	mux.HandleFunc("/evil.md", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "---\nname: ../../outside\ndescription: tries to escape\n---\nbody\n")
	})
	mux.HandleFunc("/evil-category.md", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "---\nname: fine\ncategory: ..\ndescription: tries to escape\n---\nbody\n")
	})
	mux.HandleFunc("/plain.md", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "# No frontmatter\n") })
	mux.HandleFunc("/badfm.md", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "---\nname: bad\ntags: {a: 1}\n---\nbody\n")
	})
	mux.HandleFunc("/huge.md", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "---\nname: huge\ndescription: too big\n---\n")
		chunk := strings.Repeat("x", 64<<10)
		for range 20 { // 1.25 MB, streamed without a Content-Length
			fmt.Fprint(w, chunk)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/loop/", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Path+"x", http.StatusFound)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/skills/remote-lint/SKILL.md", http.StatusFound)
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestFetchSkill(t *testing.T) {
	srv, _ := skillServer(t)
	dir := library(t, map[string]string{"cat/local/SKILL.md": doc("local", "Already here.")})
	_, cs := withSkills(t, dir, map[string]string{"EVOKORE_HTTP_ALLOW_PRIVATE": "true"})
	sum := sha256.Sum256([]byte(remoteSkill))
	good := hex.EncodeToString(sum[:])
	target := filepath.Join(dir, "Fetched", "remote-lint", "SKILL.md")

	// Checksum mismatch: nothing is written.
	text, isErr := routertest.CallText(t, cs, "fetch_skill", map[string]any{"url": srv.URL + "/skills/remote-lint/SKILL.md", "checksum": strings.Repeat("ab", 32)})
	if !isErr || !strings.HasPrefix(text, "Checksum verification failed: expected sha256 abab") || !strings.Contains(text, "got "+good) {
		t.Fatalf("mismatch: %v %q", isErr, text)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("a file was written despite the mismatch: %v", err)
	}

	// Success with the right checksum (upper case is fine), through a redirect.
	text, isErr = routertest.CallText(t, cs, "fetch_skill", map[string]any{"url": srv.URL + "/redirect", "checksum": strings.ToUpper(good), "name": "remote-lint"})
	if isErr || !strings.Contains(text, "Fetched skill 'remote-lint'") || !strings.Contains(text, "sha256 "+good) || !strings.HasSuffix(text, "Index auto-refreshed: 2 skills.") {
		t.Fatalf("fetch: %v %q", isErr, text)
	}
	b, err := os.ReadFile(target)
	if err != nil || string(b) != remoteSkill {
		t.Fatalf("written file: %v %q", err, b)
	}
	if found, _ := routertest.CallText(t, cs, "search_skills", map[string]any{"query": "remote-lint"}); !strings.HasPrefix(found, "- **remote-lint** [Fetched]") {
		t.Errorf("not searchable after the auto-refresh: %q", found)
	}

	// Existing file: refused without overwrite, replaced with it.
	text, isErr = routertest.CallText(t, cs, "fetch_skill", map[string]any{"url": srv.URL + "/skills/remote-lint/SKILL.md"})
	if !isErr || !strings.Contains(text, "Pass overwrite: true to replace it.") {
		t.Errorf("no overwrite: %v %q", isErr, text)
	}
	text, isErr = routertest.CallText(t, cs, "fetch_skill", map[string]any{"url": srv.URL + "/skills/remote-lint/SKILL.md", "overwrite": true})
	if isErr {
		t.Errorf("overwrite: %q", text)
	}

	// Name taken from the URL when the frontmatter has none is covered by
	// remote-lint's directory; a category argument wins over the file's.
	text, isErr = routertest.CallText(t, cs, "fetch_skill", map[string]any{"url": srv.URL + "/skills/remote-lint/SKILL.md", "category": "Mine", "name": "copy"})
	if isErr {
		t.Fatalf("category argument: %q", text)
	}
	if _, err := os.Stat(filepath.Join(dir, "Mine", "copy", "SKILL.md")); err != nil {
		t.Error(err)
	}

	// Characters that are unsafe in file names are replaced. (In a
	// category of its own: beside Fetched/remote-lint the copy would have
	// its key, and be refused.)
	text, isErr = routertest.CallText(t, cs, "fetch_skill", map[string]any{"url": srv.URL + "/skills/remote-lint/SKILL.md", "category": "Odd", "name": "we<ird>:na\x01me?"})
	if isErr || !strings.Contains(text, "Fetched skill 'we_ird__na_me_'") {
		t.Fatalf("sanitised name: %q", text)
	}
	if _, err := os.Stat(filepath.Join(dir, "Odd", "we_ird__na_me_", "SKILL.md")); err != nil {
		t.Error(err)
	}
}

func TestFetchSkillRefusesBadInput(t *testing.T) {
	srv, _ := skillServer(t)
	dir := library(t, map[string]string{"cat/local/SKILL.md": doc("local", "Already here.")})
	h, cs := withSkills(t, dir, map[string]string{"EVOKORE_HTTP_ALLOW_PRIVATE": "true"})
	before := snapshotTree(t, filepath.Dir(dir))
	cases := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"url": "file:///etc/passwd"}, "Only http and https URLs are supported"},
		{map[string]any{"url": "ftp://example.com/x.md"}, "Only http and https URLs are supported"},
		{map[string]any{"url": srv.URL + "/evil.md"}, "path traversal"},
		{map[string]any{"url": srv.URL + "/evil-category.md"}, "path traversal"},
		{map[string]any{"url": srv.URL + "/skills/remote-lint/SKILL.md", "name": "../../../escape"}, "path traversal"},
		{map[string]any{"url": srv.URL + "/skills/remote-lint/SKILL.md", "name": "a/b"}, "path traversal"},
		{map[string]any{"url": srv.URL + "/skills/remote-lint/SKILL.md", "category": `..\..`}, "path traversal"},
		{map[string]any{"url": srv.URL + "/skills/remote-lint/SKILL.md", "name": "..."}, "path traversal"},
		{map[string]any{"url": srv.URL + "/plain.md"}, "Invalid skill format: the file does not open with YAML frontmatter"},
		{map[string]any{"url": srv.URL + "/badfm.md"}, "Invalid skill format: its frontmatter does not validate"},
		{map[string]any{"url": srv.URL + "/huge.md"}, "over the 1 MB limit"},
		{map[string]any{"url": srv.URL + "/missing.md"}, "HTTP 404 Not Found. Check the URL; for GitHub use the raw file"},
		{map[string]any{"url": srv.URL + "/loop/"}, "stopped after 5 redirects"},
	}
	for _, c := range cases {
		text, isErr := routertest.CallText(t, cs, "fetch_skill", c.args)
		if !isErr || !strings.Contains(text, c.want) {
			t.Errorf("%v: isError=%v %q, want %q", c.args, isErr, text, c.want)
		}
	}
	if after := snapshotTree(t, filepath.Dir(dir)); after != before {
		t.Errorf("refused fetches changed the files:\nbefore %s\nafter  %s", before, after)
	}
	_ = h
}

func TestFetchSkillBlocksPrivateAddressesWithoutTheFlag(t *testing.T) {
	srv, hits := skillServer(t)
	dir := library(t, map[string]string{"cat/local/SKILL.md": doc("local", "Already here.")})
	_, cs := withSkills(t, dir, nil)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for _, u := range []string{
		srv.URL + "/skills/remote-lint/SKILL.md",                    // 127.0.0.1 literally
		"http://localhost:" + port + "/skills/remote-lint/SKILL.md", // a name that resolves to loopback
		"http://[::ffff:127.0.0.1]:" + port + "/x.md",               // IPv4-mapped IPv6
	} {
		text, isErr := routertest.CallText(t, cs, "fetch_skill", map[string]any{"url": u})
		if !isErr || !strings.Contains(text, "blocked: ") || !strings.Contains(text, "EVOKORE_HTTP_ALLOW_PRIVATE=true") {
			t.Errorf("%s: isError=%v %q", u, isErr, text)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d request(s) reached the private server", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "Fetched")); !os.IsNotExist(err) {
		t.Errorf("something was written: %v", err)
	}
}

func TestFetchSkillNeedsAWritableDirectory(t *testing.T) {
	srv, hits := skillServer(t)
	h := routertest.New(t, map[string]any{}, map[string]string{"EVOKORE_HTTP_ALLOW_PRIVATE": "true"})
	cs := h.Connect(nil)
	text, isErr := routertest.CallText(t, cs, "fetch_skill", map[string]any{"url": srv.URL + "/skills/remote-lint/SKILL.md"})
	if !isErr || !strings.Contains(text, "does not exist, so the built-in starter library is being served") {
		t.Errorf("isError=%v %q", isErr, text)
	}
	if hits.Load() != 0 {
		t.Error("it downloaded before checking where to save")
	}
}

// snapshotTree lists every path below dir with its size.
func snapshotTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil {
			fmt.Fprintf(&b, "%s:%d ", strings.TrimPrefix(p, dir), info.Size())
		}
		return nil
	})
	return b.String()
}

func TestListRegistry(t *testing.T) {
	index := `{"skills": [
		{"name": "remote-lint", "description": "Lint any repository.", "version": "1.2.0", "author": "ops", "tags": ["lint", "ci"],
		 "url": "skills/remote-lint/SKILL.md", "checksum": "` + strings.Repeat("0", 64) + `"},
		{"name": "db-backup", "description": "Back up a database.", "version": "v0.3.0", "tags": "database", "url": "https://example.com/db.md"}
	]}`
	mux := http.NewServeMux()
	mux.HandleFunc("/reg/index.json", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, index) })
	mux.HandleFunc("/other/index.json", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `[{"name": "only-one", "description": "x"}]`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	cfg := map[string]any{"servers": map[string]any{}, "skillRegistries": []any{
		map[string]any{"name": "main", "baseUrl": srv.URL + "/reg/", "index": "index.json"},
		map[string]any{"name": "other", "baseUrl": srv.URL + "/other", "index": "index.json"},
		map[string]any{"name": "down", "baseUrl": srv.URL + "/gone/", "index": "index.json"},
	}}
	h := routertest.NewWithConfig(t, dir, testutil.WriteJSON(t, dir, "mcp.config.json", cfg), map[string]string{"EVOKORE_HTTP_ALLOW_PRIVATE": "true"})
	cs := h.Connect(nil)

	text, isErr := routertest.CallText(t, cs, "list_registry", map[string]any{})
	for _, want := range []string{
		"Registry main (2 of 2 skills):",
		"- **db-backup** (v0.3.0) [database]: Back up a database.\n  https://example.com/db.md",
		"- **remote-lint** (v1.2.0) by ops [lint, ci]: Lint any repository. (checksum available)\n  " + srv.URL + "/reg/skills/remote-lint/SKILL.md sha256:" + strings.Repeat("0", 64),
		"Registry other (1 of 1 skills):",
		"Registry errors:\n- down: HTTP 404 Not Found.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if isErr {
		t.Error("partial failure is not an error")
	}
	text, _ = routertest.CallText(t, cs, "list_registry", map[string]any{"registry": "main", "query": "lint ci"})
	if !strings.Contains(text, "Registry main (1 of 2 skills):\n- **remote-lint**") || strings.Contains(text, "db-backup") || strings.Contains(text, "other") {
		t.Errorf("filtered:\n%s", text)
	}
	text, isErr = routertest.CallText(t, cs, "list_registry", map[string]any{"registry": "nope"})
	if !isErr || text != "No skill registry named 'nope'. Configured: main, other, down." {
		t.Errorf("unknown registry: %v %q", isErr, text)
	}

	// Without the flag the registry on 127.0.0.1 is refused too.
	h2 := routertest.NewWithConfig(t, t.TempDir(), testutil.WriteJSON(t, t.TempDir(), "mcp.config.json", cfg), nil)
	text, isErr = routertest.CallText(t, h2.Connect(nil), "list_registry", map[string]any{"registry": "main"})
	if !isErr || !strings.Contains(text, "- main: blocked: 127.0.0.1") {
		t.Errorf("private registry without the flag: %v %q", isErr, text)
	}
}

func TestListRegistryWithoutRegistries(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	text, isErr := routertest.CallText(t, h.Connect(nil), "list_registry", map[string]any{})
	if isErr || !strings.HasPrefix(text, "No skill registries configured.") {
		t.Errorf("%v %q", isErr, text)
	}
}

// A fetched skill whose frontmatter names an installed skill's key
// (category/name) under another folder would take that key in the index,
// replacing the installed skill (execute_skill "cat/lint" would run the
// download) without overwrite, or be ignored itself: it is refused, and
// nothing is written.
func TestFetchSkillCannotTakeAnInstalledSkillsKey(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/lint.md", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "---\nname: lint\ndescription: Not the installed lint.\n---\n\n```bash\necho fetched\n```\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	dir := library(t, map[string]string{"cat/lint/SKILL.md": doc("lint", "The installed lint.")})
	_, cs := withSkills(t, dir, map[string]string{"EVOKORE_HTTP_ALLOW_PRIVATE": "true"})
	before := snapshotTree(t, dir)
	for _, overwrite := range []bool{false, true} {
		text, isErr := routertest.CallText(t, cs, "fetch_skill", map[string]any{"url": srv.URL + "/lint.md", "category": "cat", "name": "a", "overwrite": overwrite})
		if !isErr || !strings.Contains(text, "cat/lint") || !strings.Contains(text, "Nothing was saved") {
			t.Errorf("overwrite %v: isError=%v %q", overwrite, isErr, text)
		}
	}
	if after := snapshotTree(t, dir); after != before {
		t.Errorf("the refused fetch wrote files:\nbefore %s\nafter  %s", before, after)
	}
	if text, _ := routertest.CallText(t, cs, "get_skill_help", map[string]any{"skill_name": "cat/lint"}); !strings.Contains(text, "The installed lint.") {
		t.Errorf("cat/lint is no longer the installed skill:\n%s", text)
	}
	// Saved over the installed file, with overwrite, it replaces it as
	// asked.
	if text, isErr := routertest.CallText(t, cs, "fetch_skill", map[string]any{"url": srv.URL + "/lint.md", "category": "cat", "overwrite": true}); isErr {
		t.Errorf("replacing cat/lint in place: %q", text)
	}
}

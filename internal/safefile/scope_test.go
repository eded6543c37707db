package safefile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/evokore/evokore/internal/safefile"
)

// A path is inside the scope by where it really leads: a link out of a
// root is outside, a link into one is inside, and every path outside,
// existing or not, gets the same error.
func TestScopeJudgesTheRealPath(t *testing.T) {
	base := t.TempDir()
	project := filepath.Join(base, "project")
	home := filepath.Join(project, "home")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{project, home, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) string {
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	inside := write(filepath.Join(project, "main.go"))
	secret := write(filepath.Join(outside, "secret.txt"))
	record := write(filepath.Join(home, "record.jsonl"))
	link := func(name, target string) string {
		p := filepath.Join(project, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out := link("out", secret)
	outDir := link("outdir", outside)
	// A root reached through a symlink still holds its files.
	viaLink := filepath.Join(base, "alias")
	if err := os.Symlink(project, viaLink); err != nil {
		t.Fatal(err)
	}
	s := safefile.Scope{Roots: []string{viaLink}, Excluded: []string{home}}

	for _, p := range []string{inside, filepath.Join(project, "sub", "..", "main.go"), filepath.Join(viaLink, "main.go")} {
		if got, err := s.Resolve(p); err != nil || got != inside {
			t.Errorf("Resolve(%s) = %q, %v; want %s", p, got, err, inside)
		}
	}
	for _, p := range []string{
		secret, out, filepath.Join(outDir, "secret.txt"), record, filepath.Join(project, "..", "outside", "secret.txt"),
		filepath.Join(outside, "missing"), filepath.Join(project, "missing"), "/etc/passwd", "main.go", "",
	} {
		if got, err := s.Resolve(p); !errors.Is(err, safefile.ErrUnavailable) {
			t.Errorf("Resolve(%s) = %q, %v; want ErrUnavailable", p, got, err)
		}
	}
	if got, err := (safefile.Scope{}).Resolve(inside); err == nil {
		t.Errorf("an empty scope resolved %s to %s", inside, got)
	}
}

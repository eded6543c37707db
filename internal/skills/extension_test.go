package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeSkillFile(t *testing.T, root, rel, text string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sha(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// The library maps onto the extension: a directory skill with every file
// below it (a symbolic link is not one), a one-file skill alone; a skill
// whose name the Agent Skills rules refuse is left out and reported.
func TestExtensionServesTheLibrary(t *testing.T) {
	root := t.TempDir()
	const skill = "---\nname: code-check\ndescription: Check a change.\nmetadata:\n  version: \"1.2\"\n---\n# Check\n"
	const guide = "# Guide\n"
	const notes = "---\nname: notes\ndescription: Take notes.\n---\nbody\n"
	writeSkillFile(t, root, "dev/code-check/SKILL.md", skill)
	writeSkillFile(t, root, "dev/code-check/references/guide.md", guide)
	writeSkillFile(t, root, "dev/sub/notes.md", notes)
	writeSkillFile(t, root, "dev/Bad/SKILL.md", "---\nname: Bad Name\ndescription: Refused.\n---\n")
	writeSkillFile(t, root, "outside.txt", "secret")
	if err := os.Symlink(filepath.Join(root, "outside.txt"), filepath.Join(root, "dev/code-check/link.txt")); err != nil {
		t.Fatal(err)
	}
	ix := Build(Source{FS: os.DirFS(root), Dir: root, Label: root})
	sv := ix.Extension()
	e := sv.Entry("skill://dev/code-check/SKILL.md")
	if e == nil {
		t.Fatalf("entries: %+v; diagnostics %v", sv.Entries, sv.Diagnostics)
	}
	var fm map[string]any
	if err := json.Unmarshal(e.Frontmatter, &fm); err != nil || fm["name"] != "code-check" || fm["metadata"].(map[string]any)["version"] != "1.2" {
		t.Errorf("frontmatter = %s (%v)", e.Frontmatter, err)
	}
	want := []File{{URI: "skill://dev/code-check/SKILL.md", Digest: sha(skill), Size: int64(len(skill))},
		{URI: "skill://dev/code-check/references/guide.md", Digest: sha(guide), Size: int64(len(guide))}}
	if len(e.Resources) != len(want) || e.Resources[0] != want[0] || e.Resources[1] != want[1] {
		t.Errorf("manifest = %+v; want %+v", e.Resources, want)
	}
	one := sv.Entry("skill://dev/sub/notes/SKILL.md")
	if one == nil || len(one.Resources) != 1 || one.Resources[0].Digest != sha(notes) {
		t.Errorf("one-file skill = %+v", one)
	}
	if b, ok, err := ix.ReadFile("skill://dev/code-check/references/guide.md"); !ok || err != nil || string(b) != guide {
		t.Errorf("ReadFile = %q, %v, %v", b, ok, err)
	}
	if _, ok, _ := ix.ReadFile("skill://dev/code-check/link.txt"); ok {
		t.Error("a symbolic link is served as a skill file")
	}
	if owner, ok := sv.Owner("skill://dev/code-check/references/guide.md"); !ok || owner != e {
		t.Errorf("Owner = %v, %v", owner, ok)
	}
	if len(sv.Entries) != 2 || len(sv.Diagnostics) != 1 || !strings.Contains(sv.Diagnostics[0].Message, "Agent Skills name") {
		t.Errorf("entries %d, diagnostics %v", len(sv.Entries), sv.Diagnostics)
	}
}

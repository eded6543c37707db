package policy

import (
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/skills"
)

func pinnedSkill(uri, name, digest string) skills.Pinned {
	files := []skills.File{{URI: uri, Digest: digest, Size: 1}}
	return skills.Pinned{URI: uri, Name: name, Hash: skills.ManifestHash(files), Files: files}
}

// A child's skills are pinned as first seen; a changed manifest, or a
// skill added later, is held (across a reopen of the store) until an
// operator accepts it, by server or by the skill's name.
func TestSkillPinsHoldAChangedSkillUntilAccepted(t *testing.T) {
	home := t.TempDir()
	srv := config.Server{ID: "kids", Command: "skillserver"}
	const a, b = "skill://git-flow/SKILL.md", "skill://deploy/SKILL.md"
	d1, d2 := "sha256:"+strings.Repeat("1", 64), "sha256:"+strings.Repeat("2", 64)
	p, err := OpenPins(home, nil)
	if err != nil {
		t.Fatal(err)
	}
	if held, _ := p.CheckSkills(srv, []skills.Pinned{pinnedSkill(a, "git-flow", d1)}); len(held) != 0 {
		t.Fatalf("first sight held %v", held)
	}
	p, _ = OpenPins(home, nil) // what was pinned is on disk
	held, _ := p.CheckSkills(srv, []skills.Pinned{pinnedSkill(a, "git-flow", d2), pinnedSkill(b, "deploy", d1)})
	if !strings.Contains(held[a], "files changed") || !strings.Contains(held[b], "added it") || strings.Contains(held[a], d2) {
		t.Fatalf("held = %v", held)
	}
	if hs := p.HeldSkills(); len(hs) != 2 || hs[0].URI != b || hs[0].Reason != "added" || hs[1].Reason != "changed" || hs[1].Target != "kids/git-flow" {
		t.Errorf("HeldSkills = %+v", hs)
	}
	if got, err := p.Accept("kids", "git-flow"); err != nil || len(got) != 1 {
		t.Fatalf("accept git-flow = %v, %v", got, err)
	}
	held, _ = p.CheckSkills(srv, []skills.Pinned{pinnedSkill(a, "git-flow", d2), pinnedSkill(b, "deploy", d1)})
	if _, ok := held[a]; ok || held[b] == "" {
		t.Fatalf("after accepting git-flow, held = %v", held)
	}
	if _, err := p.Accept("kids", ""); err != nil {
		t.Fatal(err)
	}
	if held, _ = p.CheckSkills(srv, []skills.Pinned{pinnedSkill(a, "git-flow", d2), pinnedSkill(b, "deploy", d1)}); len(held) != 0 {
		t.Fatalf("after accepting the server, held = %v", held)
	}
}

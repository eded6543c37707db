package skills

import (
	"testing"

	starter "github.com/evokore/evokore/SKILLS"
	"github.com/evokore/evokore/internal/catalog"
)

// The starter library is what a fresh install serves: it must be clean,
// big enough, and hold every skill a shipped profile injects.
func TestStarterLibrary(t *testing.T) {
	ix := Build(Source{FS: starter.FS, Label: EmbeddedLabel})
	if len(ix.Diagnostics) != 0 || len(ix.AllProblems()) != 0 {
		t.Fatalf("problems: %v %v", ix.Diagnostics, ix.AllProblems())
	}
	// The README promises 52: a skill lost from the embed fails here.
	if ix.Len() != 52 || len(ix.Categories()) < 8 {
		t.Fatalf("%d skills in %d categories", ix.Len(), len(ix.Categories()))
	}
	for _, p := range catalog.ShippedProfiles() {
		for _, name := range p.MandatoryInjectionSkills {
			if ix.ByName(name) == nil {
				t.Errorf("profile %s injects %q, which the starter library lacks", p.Name, name)
			}
		}
	}
	runnable, requires, withNext := 0, 0, 0
	for _, s := range ix.Skills {
		if s.Description == "No description provided." || len(s.Body) < 300 {
			t.Errorf("%s: thin skill", s.Key)
		}
		for _, b := range s.Blocks {
			if b.Lang == "bash" {
				runnable++
				break
			}
		}
		if len(s.Requires) > 0 {
			requires++
		}
		if len(ix.Next(s)) > 0 {
			withNext++
		}
	}
	if runnable < 5 || requires < 5 || withNext < 10 {
		t.Errorf("%d skills with bash blocks, %d with requires, %d with next steps", runnable, requires, withNext)
	}
}

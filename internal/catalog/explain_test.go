package catalog

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// WhyNot ranks a tool where Find puts it: "git" is a name prefix of every
// git_ tool, so git_git_init is below the limit behind the shorter names,
// not "ranked 1 by relevance".
func TestWhyNotRanksAsFindDoes(t *testing.T) {
	snap, _ := loadRetrieval(t)
	all := snap.Search("git", len(snap.Entries))
	rank := slices.IndexFunc(all, func(m Match) bool { return m.Entry.Name == "git_git_init" }) + 1
	if rank <= 3 {
		t.Fatalf("git_git_init is result %d of \"git\"; the test needs it below 3", rank)
	}
	want := fmt.Sprintf("ranked %d, below the limit of 3", rank)
	if got := snap.WhyNot("git", "git_git_init", 3, nil); !strings.Contains(got, want) {
		t.Errorf("WhyNot: %q, want %q", got, want)
	}
}

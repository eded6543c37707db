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

// A tool found as an abbreviation of its name says so, not that it joined
// on meaning alone: no query word is in "github_create_pull_request", and
// its cosine with "gcpr" is nothing.
func TestSignalsNameAnAbbreviation(t *testing.T) {
	snap, _ := loadRetrieval(t)
	ms := snap.Search("gcpr", 1)
	if len(ms) == 0 || ms[0].Entry.Name != "github_create_pull_request" {
		t.Fatalf("gcpr: %v", ms)
	}
	if got := ms[0].Signals(); !strings.HasPrefix(got, "tier abbreviation") || strings.Contains(got, "meaning alone") {
		t.Errorf("signals %q: want the abbreviation tier, not meaning alone", got)
	}
}

package skills

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	starter "github.com/evokore/evokore/SKILLS"
	"github.com/evokore/evokore/internal/search/searcheval"
)

// The skills retrieval evaluation: graded queries over the starter
// library (testdata/retrieval/queries.json), written before any ranker
// was run on them: paraphrases that name no skill, typos, abbreviations
// and developer jargon, and no-answer queries the library cannot serve.

// loadSkillQueryFile reads a query set and checks that every label names
// a skill of the starter library.
func loadSkillQueryFile(t testing.TB, ix *Index, name string) []searcheval.Query {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "retrieval", name))
	if err != nil {
		t.Fatal(err)
	}
	var qs []searcheval.Query
	if err := json.Unmarshal(raw, &qs); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, q := range qs {
		for label := range q.Labels {
			if ix.ByName(label) == nil {
				t.Fatalf("%s: %s labels %q, which is not in the starter library", name, q.ID, label)
			}
		}
	}
	return qs
}

func skillRanker(ix *Index) func(string) []string {
	return func(q string) []string {
		var out []string
		for _, m := range ix.Search(q, 10) {
			out = append(out, m.Skill.Name)
		}
		return out
	}
}

// skillFloors are committed from measurement, a little under what the
// ranker scores, and only ever go up.
var skillFloors = []searcheval.Floor{
	{Kind: "all", Measure: "R@1", Min: 0.82}, {Kind: "all", Measure: "R@5", Min: 0.94},
	{Kind: "all", Measure: "MRR", Min: 0.88}, {Kind: "all", Measure: "nDCG@10", Min: 0.90},
	{Kind: "paraphrase", Measure: "R@5", Min: 0.92}, {Kind: "typo", Measure: "R@5", Min: 0.99},
	{Kind: "abbreviation", Measure: "R@5", Min: 0.92}, {Kind: "no-answer", Measure: "abstention", Min: 0.85},
}

func TestSkillRetrievalQuality(t *testing.T) {
	ix := Build(Source{FS: starter.FS, Label: EmbeddedLabel})
	qs := loadSkillQueryFile(t, ix, "queries.json")
	m := searcheval.ByKind(qs, skillRanker(ix))
	t.Logf("skills %d, queries %d:\n%s", ix.Len(), len(qs), searcheval.Table(m))
	if testing.Verbose() {
		t.Logf("misses:\n%s", strings.Join(m["all"].Misses, "\n"))
	}
	for _, msg := range searcheval.Check(m, skillFloors) {
		t.Error(msg)
	}
}

// heldOutSkillFloors are committed for queries_heldout.json, the set
// written blind and never tuned on.
var heldOutSkillFloors = []searcheval.Floor{
	{Kind: "all", Measure: "R@5", Min: 0.86}, {Kind: "all", Measure: "MRR", Min: 0.78},
	{Kind: "nl", Measure: "R@5", Min: 0.81}, {Kind: "all", Measure: "answered", Min: 0.98},
	{Kind: "no-answer", Measure: "abstention", Min: 0.8}, {Kind: "typo", Measure: "R@5", Min: 0.99},
}

// TestSkillRetrievalHeldOut scores the held-out set: mostly requests in
// plain words that share none with the skill they want, written from the
// descriptions read once; nothing is tuned on it.
func TestSkillRetrievalHeldOut(t *testing.T) {
	ix := Build(Source{FS: starter.FS, Label: EmbeddedLabel})
	qs := loadSkillQueryFile(t, ix, "queries_heldout.json")
	m := searcheval.ByKind(qs, skillRanker(ix))
	t.Logf("skills %d, held-out queries %d:\n%s", ix.Len(), len(qs), searcheval.Table(m))
	if testing.Verbose() {
		t.Logf("misses:\n%s", strings.Join(m["all"].Misses, "\n"))
	}
	for _, msg := range searcheval.Check(m, heldOutSkillFloors) {
		t.Error(msg)
	}
}

package skills

import (
	"fmt"
	"path/filepath"
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
	qs, err := searcheval.Load(filepath.Join("testdata", "retrieval", name), func(label string) bool { return ix.ByName(label) != nil })
	if err != nil {
		t.Fatal(err)
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
	searcheval.Report(t, fmt.Sprintf("skills %d", ix.Len()), loadSkillQueryFile(t, ix, "queries.json"), skillRanker(ix), skillFloors)
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
	searcheval.Report(t, fmt.Sprintf("skills %d, held-out", ix.Len()), loadSkillQueryFile(t, ix, "queries_heldout.json"), skillRanker(ix), heldOutSkillFloors)
}

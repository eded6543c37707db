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

func loadSkillQueries(t testing.TB) []searcheval.Query {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "retrieval", "queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	var qs []searcheval.Query
	if err := json.Unmarshal(raw, &qs); err != nil {
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
	{Kind: "all", Measure: "R@1", Min: 0.79}, {Kind: "all", Measure: "R@5", Min: 0.90},
	{Kind: "all", Measure: "MRR", Min: 0.83}, {Kind: "all", Measure: "nDCG@10", Min: 0.85},
	{Kind: "paraphrase", Measure: "R@5", Min: 0.85}, {Kind: "typo", Measure: "R@5", Min: 0.99},
	{Kind: "abbreviation", Measure: "R@5", Min: 0.92}, {Kind: "no-answer", Measure: "abstention", Min: 0.85},
}

func TestSkillRetrievalQuality(t *testing.T) {
	ix := Build(Source{FS: starter.FS, Label: EmbeddedLabel})
	qs := loadSkillQueries(t)
	for _, q := range qs {
		for name := range q.Labels {
			if ix.ByName(name) == nil {
				t.Fatalf("%s labels %q, which is not in the starter library", q.ID, name)
			}
		}
	}
	m := searcheval.ByKind(qs, skillRanker(ix))
	t.Logf("skills %d, queries %d:\n%s", ix.Len(), len(qs), searcheval.Table(m))
	if testing.Verbose() {
		t.Logf("misses:\n%s", strings.Join(m["all"].Misses, "\n"))
	}
	for _, msg := range searcheval.Check(m, skillFloors) {
		t.Error(msg)
	}
}

package skills

import (
	"fmt"
	"os"
	"testing"

	starter "github.com/evokore/evokore/SKILLS"
	"github.com/evokore/evokore/internal/search/searcheval"
)

// TestTuneSemantic sweeps the semantic weight, join cosine and soft-match
// cosine over the tuning set (queries.json; never the held-out set) and
// prints one row per setting. It runs only with EVOKORE_TUNE=1: it is how the committed
// values were chosen, not a check.
func TestTuneSemantic(t *testing.T) {
	if os.Getenv("EVOKORE_TUNE") == "" {
		t.Skip("set EVOKORE_TUNE=1 to sweep")
	}
	w0, f0, s0 := semanticWeight, semanticJoin, softMatch
	defer func() { semanticWeight, semanticJoin, softMatch = w0, f0, s0 }()
	for _, w := range []float64{0, 0.25, 0.5, 1} {
		for _, f := range []float64{0.6, 0.7, 0.8} {
			for _, soft := range []float64{0, 0.55, 0.6, 0.65, 0.7} {
				semanticWeight, semanticJoin, softMatch = w, f, soft
				ix := Build(Source{FS: starter.FS, Label: EmbeddedLabel})
				qs := loadSkillQueryFile(t, ix, "queries.json")
				m := searcheval.ByKind(qs, skillRanker(ix))
				a := m["all"]
				fmt.Printf("w=%.2f join=%.2f soft=%.2f R@5 %.3f MRR %.3f paraphrase R@5 %.3f typo %.3f abstained %d/%d false-abstained %d\n",
					w, f, soft, a.Recall5, a.MRR, m["paraphrase"].Recall5, m["typo"].Recall5, a.Abstained, a.NoAnswer, a.FalseAbstained)
			}
		}
	}
}

// TestTuneFigures prints R@1, R@5, MRR and nDCG@10 of both skill sets on
// one line each, and of the held-out set only those aggregates (never
// its misses, so it stays blind while a change is tuned). It runs only
// with EVOKORE_TUNE=1.
func TestTuneFigures(t *testing.T) {
	if os.Getenv("EVOKORE_TUNE") == "" {
		t.Skip("set EVOKORE_TUNE=1 to print the figures")
	}
	ix := Build(Source{FS: starter.FS, Label: EmbeddedLabel})
	for _, name := range []string{"queries.json", "queries_heldout.json"} {
		if name == "queries_heldout.json" && os.Getenv("EVOKORE_HELDOUT") == "" {
			continue
		}
		fmt.Printf("FIG skills %-20s %s\n", name, searcheval.Evaluate(loadSkillQueryFile(t, ix, name), skillRanker(ix)))
	}
}

package catalog

import (
	"fmt"
	"os"
	"testing"

	"github.com/evokore/evokore/internal/search/searcheval"
)

// TestTuneSemantic sweeps the semantic weight, join cosine and soft-match
// cosine over the tuning
// sets (queries.json and queries_extra.json; never the held-out set) and
// prints one row per setting. It runs only with EVOKORE_TUNE=1: it is
// how the committed values were chosen, not a check.
func TestTuneSemantic(t *testing.T) {
	if os.Getenv("EVOKORE_TUNE") == "" {
		t.Skip("set EVOKORE_TUNE=1 to sweep")
	}
	snap0, base := loadRetrieval(t)
	qs := append(base, loadQueryFile(t, snap0, "queries_extra.json")...)
	w0, f0, s0 := semanticWeight, semanticJoin, softMatch
	defer func() { semanticWeight, semanticJoin, softMatch = w0, f0, s0 }()
	for _, w := range []float64{0, 0.25, 0.5, 1} {
		for _, f := range []float64{0.6, 0.7, 0.8} {
			for _, soft := range []float64{0, 0.55, 0.6, 0.65} {
				semanticWeight, semanticJoin, softMatch = w, f, soft
				snap, _ := loadRetrieval(t)
				m := searcheval.ByKind(qs, toolRanker(snap))
				a := m["all"]
				fmt.Printf("w=%.2f join=%.2f soft=%.2f R@5 %.3f MRR %.3f paraphrase R@5 %.3f typo %.3f abstained %d/%d false-abstained %d\n",
					w, f, soft, a.Recall5, a.MRR, m["paraphrase"].Recall5, m["typo"].Recall5, a.Abstained, a.NoAnswer, a.FalseAbstained)
			}
		}
	}
}

// TestTuneFigures prints R@1, R@5, MRR and nDCG@10 of every tool set on
// one line each, and of the held-out set only those aggregates (never
// its misses, so it stays blind while a change is tuned). It runs only
// with EVOKORE_TUNE=1.
func TestTuneFigures(t *testing.T) {
	if os.Getenv("EVOKORE_TUNE") == "" {
		t.Skip("set EVOKORE_TUNE=1 to print the figures")
	}
	snap, base := loadRetrieval(t)
	rank := toolRanker(snap)
	for _, set := range []struct {
		name string
		qs   []searcheval.Query
	}{
		{"main", base},
		{"extra", loadQueryFile(t, snap, "queries_extra.json")},
		{"heldout", loadQueryFile(t, snap, "queries_heldout.json")},
	} {
		if set.name == "heldout" && os.Getenv("EVOKORE_HELDOUT") == "" {
			continue
		}
		fmt.Printf("FIG tools %-8s %s\n", set.name, searcheval.Evaluate(set.qs, rank))
	}
}

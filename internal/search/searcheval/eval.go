// Package searcheval scores a ranker on a graded query set with the usual
// information-retrieval measures, so the tool and skill evaluations in CI
// compute them the same way.
//
// Recall@k is the share of a query's right answers (grade 2) found in the
// top k, averaged over the queries that have one; MRR uses the first right
// answer; nDCG@10 uses gain 2^grade-1, so acceptable answers (grade 1)
// count too. A query with no labels is a no-answer query: it scores
// abstention (the ranker returned nothing) instead. A query with a right
// answer that got nothing at all is a false abstention; the "answered"
// measure is the share of answerable queries that got a result.
package searcheval

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Query is one graded query.
type Query struct {
	ID     string         `json:"id"`
	Query  string         `json:"query"`
	Kind   string         `json:"kind"`
	Labels map[string]int `json:"labels"`
}

// Scores are the measures over a set of queries.
type Scores struct {
	N                          int // queries with a right answer
	Recall1, Recall5, Recall10 float64
	MRR, NDCG10                float64
	// NoAnswer counts the queries without labels, Abstained those of them
	// that got no result.
	NoAnswer, Abstained int
	// FalseAbstained counts the queries with a right answer that got no
	// result at all: abstention that dropped a right answer.
	FalseAbstained int
	// Misses lists the queries with no right answer in the top 5, and the
	// no-answer queries that got results.
	Misses []string
}

// Abstention is the share of no-answer queries that got no result.
func (s Scores) Abstention() float64 {
	if s.NoAnswer == 0 {
		return 1
	}
	return float64(s.Abstained) / float64(s.NoAnswer)
}

// String is one table row.
func (s Scores) String() string {
	row := fmt.Sprintf("n=%d R@1 %.3f R@5 %.3f R@10 %.3f MRR %.3f nDCG@10 %.3f", s.N, s.Recall1, s.Recall5, s.Recall10, s.MRR, s.NDCG10)
	if s.NoAnswer > 0 {
		row += fmt.Sprintf(" abstained %d/%d", s.Abstained, s.NoAnswer)
	}
	if s.N > 0 {
		row += fmt.Sprintf(" false-abstained %d/%d", s.FalseAbstained, s.N)
	}
	return row
}

// Evaluate runs rank (which returns names, best first, at most 10) over
// the queries.
func Evaluate(queries []Query, rank func(q string) []string) Scores {
	var s Scores
	for _, q := range queries {
		names := rank(q.Query)
		if len(names) > 10 {
			names = names[:10]
		}
		var right []string
		for name, g := range q.Labels {
			if g == 2 {
				right = append(right, name)
			}
		}
		if len(right) == 0 {
			s.NoAnswer++
			if len(names) == 0 {
				s.Abstained++
			} else {
				s.Misses = append(s.Misses, fmt.Sprintf("%s %q (no answer) → %v", q.ID, q.Query, names[:min(3, len(names))]))
			}
			continue
		}
		recall := func(k int) float64 {
			found := 0
			for _, r := range right {
				if i := slices.Index(names, r); i >= 0 && i < k {
					found++
				}
			}
			return float64(found) / float64(len(right))
		}
		s.N++
		if len(names) == 0 {
			s.FalseAbstained++
		}
		s.Recall1 += recall(1)
		s.Recall5 += recall(5)
		s.Recall10 += recall(10)
		for i, n := range names {
			if q.Labels[n] == 2 {
				s.MRR += 1 / float64(i+1)
				break
			}
		}
		var dcg, idcg float64
		for i, n := range names {
			dcg += (math.Pow(2, float64(q.Labels[n])) - 1) / math.Log2(float64(i+2))
		}
		var grades []int
		for _, g := range q.Labels {
			grades = append(grades, g)
		}
		sort.Sort(sort.Reverse(sort.IntSlice(grades)))
		for i, g := range grades {
			if i < 10 {
				idcg += (math.Pow(2, float64(g)) - 1) / math.Log2(float64(i+2))
			}
		}
		if idcg > 0 {
			s.NDCG10 += dcg / idcg
		}
		if recall(5) == 0 {
			s.Misses = append(s.Misses, fmt.Sprintf("%s %q → %v (want %v)", q.ID, q.Query, names[:min(3, len(names))], right))
		}
	}
	if s.N > 0 {
		n := float64(s.N)
		s.Recall1, s.Recall5, s.Recall10, s.MRR, s.NDCG10 = s.Recall1/n, s.Recall5/n, s.Recall10/n, s.MRR/n, s.NDCG10/n
	}
	return s
}

// ByKind evaluates each kind of query on its own, and all of them together
// under "all".
func ByKind(queries []Query, rank func(q string) []string) map[string]Scores {
	kinds := map[string][]Query{}
	for _, q := range queries {
		kinds[q.Kind] = append(kinds[q.Kind], q)
	}
	out := map[string]Scores{"all": Evaluate(queries, rank)}
	for k, qs := range kinds {
		out[k] = Evaluate(qs, rank)
	}
	return out
}

// Table renders ByKind's result, one kind a line, in name order.
func Table(m map[string]Scores) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%-14s %s\n", k, m[k])
	}
	return b.String()
}

// Floor is a committed lower bound for one measure of one kind.
type Floor struct {
	Kind, Measure string
	Min           float64
}

// Check returns one message per floor that is not met.
func Check(m map[string]Scores, floors []Floor) []string {
	var out []string
	for _, f := range floors {
		s, ok := m[f.Kind]
		if !ok {
			out = append(out, fmt.Sprintf("%s: no queries of this kind", f.Kind))
			continue
		}
		var got float64
		switch f.Measure {
		case "R@1":
			got = s.Recall1
		case "R@5":
			got = s.Recall5
		case "R@10":
			got = s.Recall10
		case "MRR":
			got = s.MRR
		case "nDCG@10":
			got = s.NDCG10
		case "abstention":
			got = s.Abstention()
		case "answered":
			got = 1
			if s.N > 0 {
				got = 1 - float64(s.FalseAbstained)/float64(s.N)
			}
		default:
			out = append(out, "unknown measure "+f.Measure)
			continue
		}
		if got < f.Min {
			out = append(out, fmt.Sprintf("%s %s = %.3f, below the committed floor %.3f", f.Kind, f.Measure, got, f.Min))
		}
	}
	return out
}

// Load reads the query set at path and checks that every label names a
// document known holds: a set that names what the corpus lacks would
// score a ranker against answers it cannot give.
func Load(path string, known func(name string) bool) ([]Query, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var qs []Query
	if err := json.Unmarshal(raw, &qs); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for _, q := range qs {
		for label := range q.Labels {
			if !known(label) {
				return nil, fmt.Errorf("%s: %s labels %q, which is not in the corpus", path, q.ID, label)
			}
		}
	}
	return qs, nil
}

// Report scores queries by kind under rank, logs the table (and, with
// -v, the misses) headed by what, and fails t for every floor not met.
func Report(t testing.TB, what string, queries []Query, rank func(q string) []string, floors []Floor) {
	t.Helper()
	m := ByKind(queries, rank)
	t.Logf("%s, %d queries:\n%s", what, len(queries), Table(m))
	if testing.Verbose() {
		t.Logf("misses:\n%s", strings.Join(m["all"].Misses, "\n"))
	}
	for _, msg := range Check(m, floors) {
		t.Error(msg)
	}
}

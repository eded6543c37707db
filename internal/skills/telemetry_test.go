package skills

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestRecordRoutingAppendsJSONLines(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	ix := searchFixture(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := RecordRouting(home, "review a pull request", ix.Search("review a pull request", 10)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := RecordRouting(home, "nothing at all", nil); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(home, TelemetryFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []RoutingRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r RoutingRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 9 {
		t.Fatalf("%d records, want 9", len(recs))
	}
	r := recs[0]
	if r.Query != "review a pull request" || r.TopCandidate == nil || *r.TopCandidate != "pr-review" || len(r.Candidates) > 5 || r.TS == "" {
		t.Errorf("record %+v", r)
	}
	if last := recs[8]; last.TopCandidate != nil || len(last.Candidates) != 0 {
		t.Errorf("empty resolution recorded as %+v", last)
	}
}

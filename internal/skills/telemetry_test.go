package skills

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/evokore/evokore/internal/replay"
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

// The model writes the queries: the file rotates at the logs' size, so
// however long and many they are, home keeps at most LogKeep+1 files of
// it, each near LogMaxBytes.
func TestRoutingTelemetryRotates(t *testing.T) {
	home := t.TempDir()
	query := strings.Repeat("q", 1<<20)
	for range 3 * replay.LogMaxBytes >> 20 {
		if err := RecordRouting(home, query, nil); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(home, TelemetryFile+"*"))
	var total int64
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && !strings.HasSuffix(f, ".lock") {
			total += fi.Size()
		}
	}
	if fi, err := os.Stat(filepath.Join(home, TelemetryFile)); err != nil || fi.Size() > replay.LogMaxBytes+2<<20 {
		t.Errorf("the current file: %v, %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(home, TelemetryFile+".1")); err != nil {
		t.Errorf("not rotated: %v (%v)", err, files)
	}
	if limit := int64(replay.LogKeep+1) * (replay.LogMaxBytes + 2<<20); total > limit {
		t.Errorf("home keeps %d bytes of routing telemetry, bound %d", total, limit)
	}
}

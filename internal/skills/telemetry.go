package skills

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/safefile"
)

// TelemetryFile is where resolve_workflow records its routing decisions,
// one JSON object per line, under EVOKORE_HOME.
const TelemetryFile = "routing-telemetry.jsonl"

// RoutingRecord is one line of the routing telemetry, in EVOKORE-MCP's
// shape.
type RoutingRecord struct {
	TS           string   `json:"ts"`
	Query        string   `json:"query"`
	TopCandidate *string  `json:"topCandidate"`
	Candidates   []string `json:"candidates"`
}

var telemetryMu sync.Mutex

// RecordRouting appends what a resolution found to home's telemetry file:
// the query, the top candidate and up to five candidates.
func RecordRouting(home, query string, matches []Match) error {
	rec := RoutingRecord{TS: time.Now().UTC().Format(time.RFC3339Nano), Query: query, Candidates: []string{}}
	for i, m := range matches {
		if i == 5 {
			break
		}
		rec.Candidates = append(rec.Candidates, m.Skill.Name)
	}
	if len(matches) > 0 {
		top := matches[0].Skill.Name
		rec.TopCandidate = &top
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	telemetryMu.Lock()
	defer telemetryMu.Unlock()
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	f, err := safefile.OpenAppend(filepath.Join(home, TelemetryFile))
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

package skills

import (
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/evokore/evokore/internal/replay"
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
	// Rotated as the other logs under home are: the model writes the
	// queries, one a call, and nothing else would bound the file.
	return replay.AppendRotating(filepath.Join(home, TelemetryFile), line, replay.LogMaxBytes, replay.LogKeep)
}

package analytics

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/evokore/evokore/internal/safefile"
)

// Trust tiers, from best.
const (
	TierTrusted   = "Trusted"
	TierStandard  = "Standard"
	TierProbation = "Probation"
	TierUntrusted = "Untrusted"
)

// AgentTrust is one agent's ledger entry.
type AgentTrust struct {
	AgentID     string  `json:"agentId"`
	Score       float64 `json:"score"`
	Tier        string  `json:"tier"`
	LastUpdated string  `json:"lastUpdated"`
	Events      int     `json:"events"`
}

// TrustSummary counts agents per tier.
type TrustSummary struct {
	Trusted   int `json:"trusted"`
	Standard  int `json:"standard"`
	Probation int `json:"probation"`
	Untrusted int `json:"untrusted"`
}

// TrustReport is session_trust_report's answer.
type TrustReport struct {
	SessionID string       `json:"session_id"`
	Agents    []AgentTrust `json:"agents"`
	Summary   TrustSummary `json:"summary"`
}

// tierOf places a score the way the ledger does.
func tierOf(score float64) string {
	switch {
	case score >= 0.8:
		return TierTrusted
	case score >= 0.5:
		return TierStandard
	case score >= 0.3:
		return TierProbation
	}
	return TierUntrusted
}

// readTrust reads a ledger, keeping its agents in file order. A missing
// ledger is an empty report.
func readTrust(ctx context.Context, path, sessionID string) (*TrustReport, error) {
	r := &TrustReport{SessionID: sessionID, Agents: []AgentTrust{}}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	data, err := safefile.ReadFile(ctx, path, safefile.Options{MaxBytes: maxLineBytes})
	if err != nil {
		return nil, err
	}
	var doc struct {
		Agents json.RawMessage `json:"agents"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if len(doc.Agents) > 0 && string(doc.Agents) != "null" {
		dec := json.NewDecoder(bytes.NewReader(doc.Agents))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return nil, fmt.Errorf("agents is not an object")
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			var a AgentTrust
			if err := dec.Decode(&a); err != nil {
				return nil, fmt.Errorf("agent %v: %v", tok, err)
			}
			if a.AgentID == "" {
				a.AgentID, _ = tok.(string)
			}
			switch a.Tier {
			case TierTrusted, TierStandard, TierProbation, TierUntrusted:
			default:
				a.Tier = tierOf(a.Score)
			}
			r.Agents = append(r.Agents, a)
		}
		if _, err := dec.Token(); err != nil && err != io.EOF {
			return nil, err
		}
	}
	for _, a := range r.Agents {
		switch a.Tier {
		case TierTrusted:
			r.Summary.Trusted++
		case TierStandard:
			r.Summary.Standard++
		case TierProbation:
			r.Summary.Probation++
		default:
			r.Summary.Untrusted++
		}
	}
	return r, nil
}

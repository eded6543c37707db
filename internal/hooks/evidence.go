package hooks

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/evokore/evokore/internal/replay"
	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/statefile"
)

// withEvidence appends the line build returns to session sid's evidence
// file. build gets the number of lines already there and the last
// proof_hash (ZeroHash for none); the file stays locked from the read to
// the append, so two hooks never chain from the same link.
func withEvidence(home, sid string, build func(n int, last string) ([]byte, error)) error {
	path := replay.EvidencePath(home, sid)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := statefile.Lock(f); err != nil {
		return err
	}
	defer statefile.Unlock(f)
	n, last := 0, ZeroHash
	sc := bufio.NewScanner(io.NewSectionReader(f, 0, 1<<40))
	sc.Buffer(make([]byte, 64<<10), maxManifestLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		n++
		var e struct {
			ProofHash string `json:"proof_hash"`
		}
		if json.Unmarshal(line, &e) == nil && e.ProofHash != "" {
			last = e.ProofHash
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	line, err := build(n, last)
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	return err
}

// ChainError is a broken evidence chain: the first line that does not
// follow from the ones before it.
type ChainError struct {
	Line   int
	Reason string
}

func (e *ChainError) Error() string { return fmt.Sprintf("evidence line %d: %s", e.Line, e.Reason) }

// VerifyEvidence checks the hash chain of an evidence file: every line
// with a proof_hash must name the previous one as prev_hash (ZeroHash
// for the first) and hash to its proof_hash. Edit traces (no hashes) are
// skipped. It returns how many links it checked; a tampered, removed or
// reordered line gives a *ChainError.
//
// Chains EVOKORE-MCP's hooks wrote verify too: they hash tool_input in
// the key order the line holds (ours sorts the keys), and they start
// again from ZeroHash after an edit trace (ours chains across it), so a
// link is accepted when it hashes either way and, right after an edit
// trace, when it starts from ZeroHash.
func VerifyEvidence(path string) (int, error) {
	f, err := safefile.OpenOwn(path, safefile.MaxStateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxManifestLine)
	prev, links, n := ZeroHash, 0, 0
	afterTrace := false
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e Evidence
		if err := json.Unmarshal(line, &e); err != nil {
			return links, &ChainError{n, "not JSON: " + err.Error()}
		}
		if e.ProofHash == "" && e.PrevHash == "" {
			afterTrace = true
			continue
		}
		if e.PrevHash != prev && (!afterTrace || e.PrevHash != ZeroHash) {
			return links, &ChainError{n, fmt.Sprintf("prev_hash %.12s… does not name the previous link %.12s…", e.PrevHash, prev)}
		}
		want, err := ProofHash(e.AgentID, e.Tool, e.ToolInput, e.PrevHash)
		if err != nil {
			return links, &ChainError{n, err.Error()}
		}
		if want != e.ProofHash && legacyProofHash(line) != e.ProofHash {
			return links, &ChainError{n, "proof_hash does not match the line's content"}
		}
		prev, afterTrace = e.ProofHash, false
		links++
	}
	return links, sc.Err()
}

// legacyProofHash is the proof_hash EVOKORE-MCP's evidence hook gives a
// line: SHA-256 of the compact JSON {agentId, toolName, toolInput,
// prevHash}, each value as the line holds it (tool_input in its own key
// order and escapes, a missing agent "unknown", a missing input {}, a
// missing tool left out). "" when the line cannot be read so.
func legacyProofHash(line []byte) string {
	var raw map[string]json.RawMessage
	if json.Unmarshal(line, &raw) != nil {
		return ""
	}
	agent := raw["agent_id"]
	if s := string(agent); s == "" || s == `""` || s == "null" {
		agent = json.RawMessage(`"unknown"`)
	}
	input := raw["tool_input"]
	if s := string(input); s == "" || s == "null" {
		input = json.RawMessage("{}")
	}
	var doc bytes.Buffer
	doc.WriteString(`{"agentId":`)
	if json.Compact(&doc, agent) != nil {
		return ""
	}
	if tool, ok := raw["tool"]; ok && string(tool) != "null" {
		doc.WriteString(`,"toolName":`)
		if json.Compact(&doc, tool) != nil {
			return ""
		}
	}
	doc.WriteString(`,"toolInput":`)
	if json.Compact(&doc, input) != nil {
		return ""
	}
	doc.WriteString(`,"prevHash":`)
	if json.Compact(&doc, raw["prev_hash"]) != nil {
		return ""
	}
	doc.WriteByte('}')
	sum := sha256.Sum256(doc.Bytes())
	return hex.EncodeToString(sum[:])
}

// trustLedger is sessions/<sid>-trust.json, which session_trust_report
// reads.
type trustLedger struct {
	SessionID string                 `json:"sessionId"`
	Agents    map[string]*agentTrust `json:"agents"`
	UpdatedAt string                 `json:"updatedAt"`
}

type agentTrust struct {
	AgentID     string  `json:"agentId"`
	Score       float64 `json:"score"`
	Tier        string  `json:"tier"`
	LastUpdated string  `json:"lastUpdated"`
	Events      int     `json:"events"`
}

// Trust moves: an agent starts Standard and earns or loses trust with the
// evidence it leaves (see docs/decisions.md).
const (
	trustStart      = 0.7
	trustTestPassed = 0.05
	trustTestFailed = -0.10
	trustWork       = 0.01
)

// updateTrust moves the calling agent's score by one piece of evidence.
// A ledger that is not JSON is left as it is (and the error logged): the
// hook does not destroy what it cannot read.
func updateTrust(r *run, typ string, passed *bool) error {
	path := r.file("-trust.json")
	var l trustLedger
	if _, err := statefile.ReadJSON(path, &l); err != nil {
		return fmt.Errorf("trust ledger %s: %w", path, err)
	}
	if l.Agents == nil {
		l.Agents = map[string]*agentTrust{}
	}
	id := r.agent()
	a := l.Agents[id]
	if a == nil {
		a = &agentTrust{AgentID: id, Score: trustStart}
		l.Agents[id] = a
	}
	switch {
	case typ == EvidenceTest && passed != nil && *passed:
		a.Score += trustTestPassed
	case typ == EvidenceTest:
		a.Score += trustTestFailed
	default:
		a.Score += trustWork
	}
	a.Score = float64(int(min(1, max(0, a.Score))*1000+0.5)) / 1000
	a.Tier = replay.TrustTier(a.Score)
	a.Events++
	a.LastUpdated = replay.Timestamp(r.now)
	l.SessionID, l.UpdatedAt = r.sid, a.LastUpdated
	return statefile.WriteJSON(path, l, 0o600)
}

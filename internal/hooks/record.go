package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/evokore/evokore/internal/canonjson"
	"github.com/evokore/evokore/internal/replay"
)

// response is what the hooks read of a tool_response: EVOKORE-MCP's
// shape ({is_error, content[0].text, metadata.exit_code}) or Claude
// Code's Bash shape ({stdout, stderr, interrupted}).
type response struct {
	isError  bool
	text     string
	exitCode *int
}

func parseResponse(raw json.RawMessage) response {
	var out response
	if len(raw) == 0 {
		return out
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		out.text = s
		return out
	}
	var r struct {
		IsError  *bool `json:"is_error"`
		IsError2 *bool `json:"isError"`
		Content  []struct {
			Text string `json:"text"`
		} `json:"content"`
		Metadata struct {
			ExitCode *int `json:"exit_code"`
		} `json:"metadata"`
		ExitCode    *int   `json:"exit_code"`
		Stdout      string `json:"stdout"`
		Stderr      string `json:"stderr"`
		Interrupted bool   `json:"interrupted"`
		Error       string `json:"error"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return out
	}
	switch {
	case r.IsError != nil:
		out.isError = *r.IsError
	case r.IsError2 != nil:
		out.isError = *r.IsError2
	}
	out.exitCode = r.Metadata.ExitCode
	if out.exitCode == nil {
		out.exitCode = r.ExitCode
	}
	if out.exitCode != nil && *out.exitCode != 0 {
		out.isError = true
	}
	if r.Interrupted || r.Error != "" {
		out.isError = true
	}
	switch {
	case len(r.Content) > 0:
		out.text = r.Content[0].Text
	case r.Stdout != "" || r.Stderr != "":
		out.text = strings.TrimSpace(r.Stdout + "\n" + r.Stderr)
	default:
		out.text = r.Error
	}
	return out
}

// summary says what a Claude Code tool call was about (the original's
// per-tool choice: the command, the file, the pattern…).
func (p *Payload) summary() string {
	switch p.ToolName {
	case "Task", "Agent":
		if d := p.str("description"); d != "" {
			return d
		}
	case "WebFetch", "WebSearch":
		if u := p.str("url"); u != "" {
			return u
		}
	}
	return replay.Summarize(p.ToolInput)
}

// sessionReplay is the PostToolUse hook that records every call.
func sessionReplay(r *run) (int, error) {
	if r.p.ToolName == "" {
		return ExitOK, nil
	}
	resp := parseResponse(r.p.ToolResponse)
	e := replay.Entry{
		TS:      replay.Timestamp(r.now),
		Tool:    r.p.ToolName,
		Summary: r.p.summary(),
		Outcome: replay.OutcomeOK,
		Output:  resp.text,
		Source:  "hook",
	}
	if resp.isError {
		e.Outcome = replay.OutcomeError
	}
	if err := replay.Append(r.Home, r.sid, e); err != nil {
		return ExitOK, err
	}
	if _, err := r.record(EvToolInvoked, map[string]any{"tool": e.Tool, "outcome": e.Outcome}); err != nil {
		return ExitOK, err
	}
	_, err := replay.Prune(r.sessions(), replay.MaxAge, replay.MaxFiles, r.now)
	return ExitOK, err
}

// Evidence types.
const (
	EvidenceTest = "test-result"
	EvidenceGit  = "git-operation"
	EvidenceFile = "file-change"
	EvidenceEdit = "edit-trace"
)

// ZeroHash starts every evidence chain.
var ZeroHash = strings.Repeat("0", 64)

// Evidence is one line of sessions/<sid>-evidence.jsonl written by
// evidence-capture.
type Evidence struct {
	TS           string         `json:"ts"`
	Type         string         `json:"type"`
	Tool         string         `json:"tool"`
	ToolInput    map[string]any `json:"tool_input"`
	AgentID      string         `json:"agent_id"`
	Summary      string         `json:"summary"`
	EvidenceID   string         `json:"evidence_id"`
	ExitCode     *int           `json:"exit_code"`
	Passed       *bool          `json:"passed"`
	InvocationTS string         `json:"invocation_ts,omitempty"`
	PrevHash     string         `json:"prev_hash"`
	ProofHash    string         `json:"proof_hash"`
}

// EditTrace is the line after-edit adds to the same file: no hashes.
type EditTrace struct {
	EvidenceID string `json:"evidence_id"`
	Type       string `json:"type"`
	TS         string `json:"ts"`
	Tool       string `json:"tool"`
	File       string `json:"file"`
	IsError    bool   `json:"is_error"`
}

var (
	testCommand = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(^|[\s;&|(])((go|cargo|deno|bun|mix|dotnet|swift|zig)\s+test|(npm|pnpm|yarn)\s+(run\s+)?test|npx\s+(jest|vitest|mocha|playwright)|pytest|python[0-9.]*\s+-m\s+(pytest|unittest)|jest|vitest|mocha|rspec|phpunit|ctest|make\s+(test|check)|gradle\w*\s+test|mvn\s+test|tox)(\s|$|;)`)
	})
	gitCommand = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(^|[\s;&|(])git\s+(\S+\s+)*(commit|push|merge|rebase|tag|cherry-pick|revert|reset|checkout|switch|pull)(\s|$)`)
	})
)

// evidenceType classifies a call, or "" when it is no evidence.
func evidenceType(tool, command string) string {
	switch tool {
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		return EvidenceFile
	case "Bash":
		switch {
		case testCommand().MatchString(command):
			return EvidenceTest
		case gitCommand().MatchString(command):
			return EvidenceGit
		}
	}
	return ""
}

// ProofHash is sha256 over the JSON {agentId, toolName, toolInput,
// prevHash}, keys in that order and tool_input rendered canonically
// (keys sorted), so a verifier recomputes it from the line alone.
func ProofHash(agentID, tool string, input map[string]any, prev string) (string, error) {
	if input == nil {
		input = map[string]any{}
	}
	in, err := canonjson.Marshal(input)
	if err != nil {
		return "", err
	}
	a, _ := json.Marshal(agentID)
	t, _ := json.Marshal(tool)
	p, _ := json.Marshal(prev)
	doc := fmt.Sprintf(`{"agentId":%s,"toolName":%s,"toolInput":%s,"prevHash":%s}`, a, t, in, p)
	sum := sha256.Sum256([]byte(doc))
	return hex.EncodeToString(sum[:]), nil
}

func (r *run) agent() string {
	if r.p.AgentID != "" {
		return r.p.AgentID
	}
	return "main"
}

// evidenceCapture is the PostToolUse hook that records tests, git
// operations and file changes in a hash chain.
func evidenceCapture(r *run) (int, error) {
	typ := evidenceType(r.p.ToolName, r.p.str("command"))
	if typ == "" {
		return ExitOK, nil
	}
	resp := parseResponse(r.p.ToolResponse)
	var passed *bool
	if typ == EvidenceTest {
		ok := !resp.isError
		passed = &ok
	}
	var ev Evidence
	err := withEvidence(r.Home, r.sid, func(n int, last string) ([]byte, error) {
		hash, err := ProofHash(r.agent(), r.p.ToolName, r.p.ToolInput, last)
		if err != nil {
			return nil, err
		}
		ev = Evidence{
			TS: replay.Timestamp(r.now), Type: typ, Tool: r.p.ToolName, ToolInput: r.p.ToolInput,
			AgentID: r.agent(), Summary: replay.Truncate(r.p.summary(), replay.MaxSummary),
			EvidenceID: fmt.Sprintf("E-%03d", n+1), ExitCode: resp.exitCode, Passed: passed,
			PrevHash: last, ProofHash: hash,
		}
		if ev.ToolInput == nil {
			ev.ToolInput = map[string]any{}
		}
		return json.Marshal(ev)
	})
	if err != nil {
		return ExitOK, err
	}
	if _, err := r.record(EvEvidenceCaptured, map[string]any{"evidence_id": ev.EvidenceID, "type": typ, "tool": ev.Tool}); err != nil {
		return ExitOK, err
	}
	if err := updateTrust(r, typ, passed); err != nil {
		return ExitOK, err
	}
	_, err = replay.Prune(r.sessions(), replay.MaxAge, replay.MaxFiles, r.now)
	return ExitOK, err
}

// afterEdit is the PostToolUse hook that traces edits.
func afterEdit(r *run) (int, error) {
	switch r.p.ToolName {
	case "Edit", "Write", "MultiEdit":
	default:
		return ExitOK, nil
	}
	file := r.p.str("file_path")
	resp := parseResponse(r.p.ToolResponse)
	var id string
	err := withEvidence(r.Home, r.sid, func(n int, _ string) ([]byte, error) {
		id = fmt.Sprintf("E-%03d", n+1)
		return json.Marshal(EditTrace{EvidenceID: id, Type: EvidenceEdit, TS: replay.Timestamp(r.now), Tool: r.p.ToolName, File: file, IsError: resp.isError})
	})
	if err != nil {
		return ExitOK, err
	}
	_, err = r.record(EvEvidenceCaptured, map[string]any{"evidence_id": id, "type": EvidenceEdit, "tool": r.p.ToolName, "file": file})
	return ExitOK, err
}

// subagentTracker is the PostToolUse hook that records Task calls.
func subagentTracker(r *run) (int, error) {
	if r.p.ToolName != "Task" && r.p.ToolName != "Agent" {
		return ExitOK, nil
	}
	s, err := Fold(r.Home, r.sid)
	if err != nil {
		return ExitOK, err
	}
	sa := Subagent{
		ID:          fmt.Sprintf("SA-%03d", len(s.Subagents)+1),
		Description: replay.Truncate(r.p.str("description"), replay.MaxSummary),
		Type:        r.p.str("subagent_type"),
		TS:          replay.Timestamp(r.now),
		IsError:     parseResponse(r.p.ToolResponse).isError,
	}
	_, err = r.record(EvSubagentTracked, sa)
	return ExitOK, err
}

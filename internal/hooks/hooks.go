package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/evokore/evokore/internal/replay"
)

// Exit codes Claude Code gives meaning to.
const (
	// ExitOK lets the session go on.
	ExitOK = 0
	// ExitBlock blocks the tool call (PreToolUse) or the stop (Stop); the
	// stderr text is shown to the model.
	ExitBlock = 2
)

// maxPayload bounds what a hook reads from stdin.
const maxPayload = 8 << 20

// Env is what a hook runs with: the process's streams and settings,
// replaceable in tests.
type Env struct {
	// Home is EVOKORE_HOME.
	Home   string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads a variable (os.Getenv).
	Getenv func(string) string
	// Now is the clock.
	Now func() time.Time
	// Dir is the working directory, used when the payload names none.
	Dir string
}

// Payload is the part of a Claude Code hook payload the hooks read.
// Unknown fields are ignored; every field may be missing.
type Payload struct {
	SessionID      string          `json:"session_id"`
	HookEventName  string          `json:"hook_event_name"`
	Cwd            string          `json:"cwd"`
	TranscriptPath string          `json:"transcript_path"`
	ToolName       string          `json:"tool_name"`
	ToolInput      map[string]any  `json:"tool_input"`
	ToolResponse   json.RawMessage `json:"tool_response"`
	AgentID        string          `json:"agent_id"`
	// UserMessage is EVOKORE-MCP's name for the prompt; Prompt is Claude
	// Code's. Either is read.
	UserMessage    string `json:"user_message"`
	Prompt         string `json:"prompt"`
	Trigger        string `json:"trigger"`
	Reason         string `json:"reason"`
	CustomInstr    string `json:"custom_instructions"`
	StopHookActive bool   `json:"stop_hook_active"`
}

// prompt is the user's prompt under either name.
func (p *Payload) prompt() string {
	if p.Prompt != "" {
		return p.Prompt
	}
	return p.UserMessage
}

// str returns the string input field k, or "".
func (p *Payload) str(k string) string {
	s, _ := p.ToolInput[k].(string)
	return s
}

// Names of the hooks, as `evokore hook <name>` spells them.
const (
	DamageControl   = "damage-control"
	PurposeGate     = "purpose-gate"
	RepoAudit       = "repo-audit"
	SessionReplay   = "session-replay"
	EvidenceCapture = "evidence-capture"
	AfterEdit       = "after-edit"
	SubagentTracker = "subagent-tracker"
	PreCompact      = "pre-compact"
	TillDone        = "tilldone"
	VoiceStop       = "voice-stop"
)

// hook runs one event; a returned error is logged and the hook exits 0.
type hook func(r *run) (int, error)

var table = map[string]hook{
	DamageControl:   damageControl,
	PurposeGate:     purposeGate,
	RepoAudit:       repoAudit,
	SessionReplay:   sessionReplay,
	EvidenceCapture: evidenceCapture,
	AfterEdit:       afterEdit,
	SubagentTracker: subagentTracker,
	PreCompact:      preCompact,
	TillDone:        tillDone,
	VoiceStop:       voiceStop,
}

// Names returns the hooks in name order.
func Names() []string {
	out := make([]string, 0, len(table))
	for n := range table {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// run is one hook invocation.
type run struct {
	Env
	name string
	p    Payload
	sid  string // sanitised
	now  time.Time
}

func (r *run) getenv(k string) string {
	if r.Getenv == nil {
		return ""
	}
	return r.Getenv(k)
}

func (r *run) sessions() string { return replay.SessionsDir(r.Home) }

func (r *run) file(suffix string) string { return replay.SessionFile(r.Home, r.sid, suffix) }

func (r *run) cwd() string {
	if r.p.Cwd != "" {
		return r.p.Cwd
	}
	return r.Dir
}

// Run runs the hook called name and returns the process exit code. It
// never panics: a panic, like any error, is logged to logs/hooks.jsonl
// and gives ExitOK.
func Run(name string, env Env) (code int) {
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.Stdout == nil {
		env.Stdout = io.Discard
	}
	if env.Stderr == nil {
		env.Stderr = io.Discard
	}
	r := &run{Env: env, name: name, now: env.Now()}
	defer func() {
		if v := recover(); v != nil {
			r.fail(fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
			code = ExitOK
		}
	}()
	h, ok := table[name]
	if !ok {
		r.fail(fmt.Errorf("unknown hook %q", name))
		return ExitOK
	}
	if env.Stdin != nil {
		data, err := io.ReadAll(io.LimitReader(env.Stdin, maxPayload+1))
		switch {
		case err != nil:
			r.fail(fmt.Errorf("read the payload: %w", err))
			return ExitOK
		case len(data) > maxPayload:
			r.fail(errors.New("payload larger than 8 MiB"))
			return ExitOK
		case len(strings.TrimSpace(string(data))) > 0:
			if err := json.Unmarshal(data, &r.p); err != nil {
				// A payload that is not an object fails safe, except in
				// damage-control, which judges what it can.
				r.fail(fmt.Errorf("payload is not a hook payload: %w", err))
				return ExitOK
			}
		}
	}
	r.sid = replay.SafeID(r.p.SessionID)
	code, err := h(r)
	if err != nil {
		r.fail(err)
		if code != ExitBlock {
			return ExitOK
		}
	}
	return code
}

// fail records err in logs/hooks.jsonl, or on stderr when the log cannot
// be written; Claude Code shows a hook's stderr only in verbose mode.
func (r *run) fail(err error) {
	if lerr := r.log("error", map[string]any{"error": err.Error()}); lerr != nil {
		fmt.Fprintf(r.Stderr, "evokore hook %s: %v (and the log could not be written: %v)\n", r.name, err, lerr)
	}
}

// log appends one line {ts, hook, event, session_id?, …} to logs/hooks.jsonl.
func (r *run) log(event string, fields map[string]any) error {
	if r.Home == "" {
		return errors.New("EVOKORE_HOME is not set")
	}
	line := map[string]any{"ts": replay.Timestamp(r.now), "hook": r.name, "event": event}
	if r.p.SessionID != "" {
		line["session_id"] = r.sid
	}
	for k, v := range fields {
		line[k] = v
	}
	b, err := json.Marshal(line)
	if err != nil {
		return err
	}
	return replay.AppendRotating(LogPath(r.Home), b, replay.LogMaxBytes, replay.LogKeep)
}

// LogPath is logs/hooks.jsonl under home.
func LogPath(home string) string { return filepath.Join(home, "logs", "hooks.jsonl") }

// writeJSON prints v on stdout as one JSON line.
func (r *run) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(r.Stdout, "%s\n", b)
	return err
}

// addContext answers a UserPromptSubmit hook with text for the model.
func (r *run) addContext(text string) error {
	return r.writeJSON(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":     "UserPromptSubmit",
		"additionalContext": text,
	}})
}

package policy

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/canonjson"
	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/statefile"
)

// Approval tokens.
//
// A call whose level is require_approval is intercepted with a token the
// model must bring back, after asking the user, to run that exact call
// once. A token is 48 lower-case hex characters: a random 8-byte approval
// id, then the first 16 bytes of an HMAC-SHA256, under a key only this
// process holds, over the id, the session, the tool, the canonical JSON of
// the arguments (keys sorted, the token removed), the hash of the tool's
// definition and the expiry. A token therefore cannot be made up, moved to
// another session, tool or argument set, or outlive its five minutes, and
// a tool whose definition changes invalidates it. Each approval is used at
// most once: consuming it is one map deletion under a lock, so of any
// number of concurrent retries exactly one runs.
//
// The key lives in memory only. Tokens are short-lived and the model is
// simply intercepted again after a restart, while a key on disk would be
// one more secret to steal; nothing outside this process needs to verify a
// token. Denying works by approval id through a file, so the CLI needs no
// key.

// TokenField is the argument that carries an approval token.
const TokenField = catalog.ApprovalTokenField

const (
	idBytes  = 8
	macBytes = 16
	// TokenLen is the length of a token in hex characters.
	TokenLen = 2 * (idBytes + macBytes)
)

// Files under EVOKORE_HOME.
const (
	pendingFile = "pending-approvals.json"
	deniedFile  = "denied-approvals.json"
)

// Approvals mints, checks and consumes approval tokens.
type Approvals struct {
	key  []byte
	ttl  time.Duration
	home string
	now  func() time.Time

	mu      sync.Mutex
	pending map[string]*approval
}

type approval struct {
	id      string
	tool    string
	session string
	created time.Time
	expires time.Time
	prefix  string
}

// NewApprovals starts an approval store whose state file lives under home
// ("" keeps it in memory only).
func NewApprovals(home string, ttl time.Duration, now func() time.Time) *Approvals {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	if now == nil {
		now = time.Now
	}
	return &Approvals{key: key, ttl: ttl, home: home, now: now, pending: map[string]*approval{}}
}

// argsHash is the canonical JSON of the arguments without the token.
func argsHash(args json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(args)) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	c, err := canonjson.FromJSON(args, TokenField)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(c)
	return sum[:], nil
}

func (a *Approvals) mac(id, session string, e *catalog.Entry, args json.RawMessage, expires time.Time) ([]byte, error) {
	h, err := argsHash(args)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, a.key)
	fmt.Fprintf(m, "%s\x00%s\x00%s\x00%s\x00%d\x00", id, session, e.Name, e.Hash, expires.UnixMilli())
	m.Write(h)
	return m.Sum(nil)[:macBytes], nil
}

// Intercept mints a token for this exact call and returns the result that
// asks the model to get a human's approval.
func (a *Approvals) Intercept(session string, e *catalog.Entry, args json.RawMessage) *mcp.CallToolResult {
	idRaw := make([]byte, idBytes)
	_, _ = rand.Read(idRaw)
	id := hex.EncodeToString(idRaw)
	now := a.now()
	expires := now.Add(a.ttl)
	mac, err := a.mac(id, session, e, args, expires)
	if err != nil {
		r := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Cannot approve arguments that are not valid JSON: " + err.Error()}}}
		return r
	}
	token := id + hex.EncodeToString(mac)
	a.mu.Lock()
	a.purgeLocked(now)
	a.pending[id] = &approval{id: id, tool: e.Name, session: session, created: now, expires: expires, prefix: token[:8] + "..."}
	a.persistLocked()
	a.mu.Unlock()
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: InterceptionText(e.Name, token)}}}
}

// InterceptionText is the exact text clients written for EVOKORE-MCP match.
func InterceptionText(tool, token string) string {
	return "[EVOKORE-MCP SECURITY INTERCEPTOR] ACTION REQUIRES HUMAN APPROVAL.\n\n" +
		"You attempted to call '" + tool + "'. You must stop right now and ask the user for explicit permission to execute this tool with these arguments. DO NOT proceed until they say YES.\n\n" +
		"If they approve, retry this exact same tool call but add the argument '" + TokenField + "' with the value '" + token + "'."
}

// Validate checks a token against the call it comes with and returns its
// approval id. It does not consume the approval.
func (a *Approvals) Validate(session string, e *catalog.Entry, args json.RawMessage, token string) (string, bool) {
	if len(token) != TokenLen {
		return "", false
	}
	raw, err := hex.DecodeString(token)
	if err != nil {
		return "", false
	}
	id := hex.EncodeToString(raw[:idBytes])
	now := a.now()
	a.mu.Lock()
	ap, ok := a.pending[id]
	if ok && !now.Before(ap.expires) {
		delete(a.pending, id)
		a.persistLocked()
		ok = false
	}
	a.mu.Unlock()
	if !ok || ap.tool != e.Name || ap.session != session {
		return "", false
	}
	want, err := a.mac(id, session, e, args, ap.expires)
	if err != nil || !hmac.Equal(want, raw[idBytes:]) {
		return "", false
	}
	if a.denied(id) {
		a.mu.Lock()
		delete(a.pending, id)
		a.persistLocked()
		a.mu.Unlock()
		return "", false
	}
	return id, true
}

// Consume uses up an approval; false means it was already used (or
// revoked) and the call must not run.
func (a *Approvals) Consume(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.pending[id]; !ok {
		return false
	}
	delete(a.pending, id)
	a.persistLocked()
	return true
}

// RevokeTool kills every outstanding approval for a tool.
func (a *Approvals) RevokeTool(tool string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	changed := false
	for id, ap := range a.pending {
		if ap.tool == tool {
			delete(a.pending, id)
			changed = true
		}
	}
	if changed {
		a.persistLocked()
	}
}

func (a *Approvals) purgeLocked(now time.Time) {
	for id, ap := range a.pending {
		if !now.Before(ap.expires) {
			delete(a.pending, id)
		}
	}
}

// PendingApproval is one entry of pending-approvals.json. It carries a
// token prefix only: the file is readable by tools that must not be able
// to approve anything.
type PendingApproval struct {
	ID        string `json:"id"`
	Token     string `json:"token"`
	ToolName  string `json:"toolName"`
	CreatedAt int64  `json:"createdAt"`
	ExpiresAt int64  `json:"expiresAt"`
	Denied    bool   `json:"denied,omitempty"`
	DeniedAt  int64  `json:"deniedAt,omitempty"`
}

func (a *Approvals) persistLocked() {
	if a.home == "" {
		return
	}
	list := make([]PendingApproval, 0, len(a.pending))
	for _, ap := range a.pending {
		list = append(list, PendingApproval{ID: ap.id, Token: ap.prefix, ToolName: ap.tool, CreatedAt: ap.created.UnixMilli(), ExpiresAt: ap.expires.UnixMilli()})
	}
	slices.SortFunc(list, func(x, y PendingApproval) int { return int(x.CreatedAt - y.CreatedAt) })
	// Best effort: a full disk must not block the call path; the file is a
	// view for operators, the decision is in memory.
	_ = statefile.WriteJSON(filepath.Join(a.home, pendingFile), list, 0o600)
}

// deniedApproval is one entry of denied-approvals.json.
type deniedApproval struct {
	ID       string `json:"id"`
	DeniedAt int64  `json:"deniedAt"`
}

func (a *Approvals) denied(id string) bool {
	if a.home == "" {
		return false
	}
	var list []deniedApproval
	if ok, err := statefile.ReadJSON(filepath.Join(a.home, deniedFile), &list); !ok || err != nil {
		return false
	}
	return slices.ContainsFunc(list, func(d deniedApproval) bool { return d.ID == id })
}

// ListPending reads the pending approvals a router left under home,
// without expired ones, marking those an operator denied.
func ListPending(home string, now time.Time) ([]PendingApproval, error) {
	var list []PendingApproval
	if _, err := statefile.ReadJSON(filepath.Join(home, pendingFile), &list); err != nil {
		return nil, err
	}
	var denied []deniedApproval
	if _, err := statefile.ReadJSON(filepath.Join(home, deniedFile), &denied); err != nil {
		return nil, err
	}
	out := list[:0]
	for _, p := range list {
		if p.ExpiresAt <= now.UnixMilli() {
			continue
		}
		for _, d := range denied {
			if d.ID == p.ID {
				p.Denied, p.DeniedAt = true, d.DeniedAt
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// DenyApproval records that an approval must never run. The id must name a
// pending approval.
func DenyApproval(home, id string, now time.Time) error {
	pending, err := ListPending(home, now)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(pending, func(p PendingApproval) bool { return p.ID == id }) {
		return fmt.Errorf("no pending approval %q", id)
	}
	path := filepath.Join(home, deniedFile)
	var denied []deniedApproval
	if _, err := statefile.ReadJSON(path, &denied); err != nil {
		return err
	}
	// Keep the file small: drop entries older than any token can live.
	cutoff := now.Add(-24 * time.Hour).UnixMilli()
	denied = slices.DeleteFunc(denied, func(d deniedApproval) bool { return d.DeniedAt < cutoff })
	denied = append(denied, deniedApproval{ID: id, DeniedAt: now.UnixMilli()})
	return statefile.WriteJSON(path, denied, 0o600)
}

package policy

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/canonjson"
	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/statefile"
)

// Approvals.
//
// A call whose level is require_approval runs only after a human said yes
// to that exact call: the session, the tool, the canonical JSON of its
// arguments (exact number text, keys sorted, the token field removed),
// the hash of the tool's definition, anything else a tool binds (the code
// of an execute_skill step), within the approval's lifetime, once.
//
// The yes must travel outside the model's channel, because the model is
// the party being gated: a model that ignores "ask the user" would
// otherwise approve itself. So, by mode:
//
//   - auto (the default): when the client declared elicitation, the user
//     is asked through elicitation/create; otherwise as operator.
//   - operator: the model is told only the approval id and that it waits;
//     an operator approves or denies it with `evokore approvals approve|deny
//     ID` (or the dashboard); the same call retried after approval runs
//     once, and a denied one says so.
//   - token: EVOKORE-MCP's flow, an explicit opt-in that trusts the model:
//     the interception hands the model a token that approves the retry.
//
// State under EVOKORE_HOME/approvals: each router writes its own
// pending-<router>.json (so two routers never overwrite each other's, and
// a file whose router is gone is ignored), and every decision is one line
// appended under a lock to decisions.jsonl (so concurrent CLIs never lose
// a denial). A decisions file that cannot be read fails closed: no
// approval-gated call runs until it is fixed. Nothing in these files can
// approve anything: they hold ids, tools, times and an argument summary.
//
// In token mode a token is 48 lower-case hex characters: the 8-byte
// approval id, then 16 bytes of an HMAC-SHA256 under a key only this
// process holds over the binding and the expiry. The key lives in memory
// only: tokens are short-lived, and a key on disk would be one more
// secret to steal.

// TokenField is the argument that carries an approval token.
const TokenField = catalog.ApprovalTokenField

const (
	idBytes  = 8
	macBytes = 16
	// TokenLen is the length of a token in hex characters.
	TokenLen = 2 * (idBytes + macBytes)
	// MaxPending bounds the approvals one router keeps waiting; the oldest
	// is dropped first (its call is simply intercepted again).
	MaxPending = 256
)

// Approval modes.
const (
	ModeAuto     = "auto"
	ModeOperator = "operator"
	ModeToken    = "token"
)

// ValidMode reports whether m names an approval mode.
func ValidMode(m string) bool { return m == ModeAuto || m == ModeOperator || m == ModeToken }

// Approval states.
const (
	StatePending  = "pending"
	StateApproved = "approved"
	StateDenied   = "denied"
)

// Files under EVOKORE_HOME.
const (
	approvalsDir  = "approvals"
	decisionsFile = "decisions.jsonl"
)

// Approvals holds one router's approvals.
type Approvals struct {
	key    []byte
	ttl    time.Duration
	dir    string // "" keeps everything in memory
	router string
	now    func() time.Time

	mu        sync.Mutex
	byID      map[string]*approval
	byBinding map[string]*approval
	order     []*approval // oldest first
	decisions decisionLog
	// shared, when set, holds the approvals instead (see Share).
	shared ApprovalBackend
}

type approval struct {
	id      string
	tool    string
	session string
	tenant  string
	binding string
	summary string
	created time.Time
	expires time.Time
	state   string
	prefix  string // token mode: the first 8 characters of the token
	// token approvals are found by id only, never by binding.
	token bool
}

// NewApprovals starts the approvals of one router whose state lives under
// home ("" keeps it in memory only).
func NewApprovals(home string, ttl time.Duration, now func() time.Time) *Approvals {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	if now == nil {
		now = time.Now
	}
	a := &Approvals{key: key, ttl: ttl, now: now, byID: map[string]*approval{}, byBinding: map[string]*approval{},
		router: fmt.Sprintf("%d-%s", os.Getpid(), randomHex(4))}
	if home != "" {
		a.dir = filepath.Join(home, approvalsDir)
		a.decisions.path = filepath.Join(a.dir, decisionsFile)
	}
	return a
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Binding is what an approval is bound to, as one opaque string.
func Binding(session string, e *catalog.Entry, args json.RawMessage, extra string) (string, error) {
	if len(bytes.TrimSpace(args)) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	c, err := canonjson.FromJSON(args, TokenField)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00", session, e.Name, e.Hash, extra)
	h.Write(c)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Request is one gated call asking to run.
type Request struct {
	Session string
	// Tenant is the session's tenant: the approval is shown to, and
	// decided by, callers of that tenant only (httpguard's tenancy rule).
	Tenant  string
	Tool    string
	Binding string
	// Summary is a readable, redacted summary of the arguments for the
	// operator.
	Summary string
}

// Outcome is what Request decided.
type Outcome struct {
	ID    string
	State string
	// New is set when Ask filed the approval just now.
	New bool
}

// Ask looks up the approval bound to r, or files a new pending one. It
// returns StateApproved when an operator approved it (the caller consumes
// it with Consume just before the call runs), StateDenied when an
// operator denied it, else StatePending. An unreadable decisions file is
// an error: nothing is approved while it is.
func (a *Approvals) Ask(r Request) (Outcome, error) {
	if a.shared != nil {
		return a.askShared(r)
	}
	if err := a.sync(); err != nil {
		return Outcome{}, err
	}
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.purgeLocked(now)
	if ap, ok := a.byBinding[r.Binding]; ok {
		return Outcome{ID: ap.id, State: ap.state}, nil
	}
	ap := &approval{id: randomHex(idBytes), tool: r.Tool, session: r.Session, tenant: r.Tenant, binding: r.Binding, summary: r.Summary,
		created: now, expires: now.Add(a.ttl), state: StatePending}
	a.addLocked(ap)
	a.persistLocked()
	return Outcome{ID: ap.id, State: StatePending, New: true}, nil
}

func (a *Approvals) addLocked(ap *approval) {
	if len(a.order) >= MaxPending {
		a.removeLocked(a.order[0])
	}
	a.byID[ap.id] = ap
	if !ap.token {
		a.byBinding[ap.binding] = ap
	}
	a.order = append(a.order, ap)
}

func (a *Approvals) removeLocked(ap *approval) {
	delete(a.byID, ap.id)
	if a.byBinding[ap.binding] == ap {
		delete(a.byBinding, ap.binding)
	}
	if i := slices.Index(a.order, ap); i >= 0 {
		a.order = slices.Delete(a.order, i, i+1)
	}
}

// Consume uses up an approved approval; false means it was already used,
// revoked or denied meanwhile, and the call must not run.
func (a *Approvals) Consume(id string) bool {
	if a.shared != nil {
		return a.consumeShared(id)
	}
	if err := a.sync(); err != nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	ap, ok := a.byID[id]
	if !ok || ap.state != StateApproved || !a.now().Before(ap.expires) {
		return false
	}
	a.removeLocked(ap)
	a.persistLocked()
	return true
}

// Mint files a token-mode approval for r and returns its token.
func (a *Approvals) Mint(r Request) string {
	token, _ := a.MintChecked(r)
	return token
}

// MintChecked is Mint that reports a shared backend's failure: the token
// it would return could never be redeemed.
func (a *Approvals) MintChecked(r Request) (string, error) {
	if a.shared != nil {
		return a.mintShared(r)
	}
	return a.mintLocal(r), nil
}

func (a *Approvals) mintLocal(r Request) string {
	now := a.now()
	id := randomHex(idBytes)
	expires := now.Add(a.ttl)
	token := id + hex.EncodeToString(a.mac(id, r.Binding, expires))
	a.mu.Lock()
	defer a.mu.Unlock()
	a.purgeLocked(now)
	// Every token stands alone, as in EVOKORE-MCP: intercepting the same
	// call again does not void the token the model already holds.
	a.addLocked(&approval{id: id, tool: r.Tool, session: r.Session, tenant: r.Tenant, binding: r.Binding, summary: r.Summary,
		created: now, expires: expires, state: StateApproved, prefix: token[:8] + "...", token: true})
	a.persistLocked()
	return token
}

func (a *Approvals) mac(id, binding string, expires time.Time) []byte {
	m := hmac.New(sha256.New, a.key)
	fmt.Fprintf(m, "%s\x00%s\x00%d", id, binding, expires.UnixMilli())
	return m.Sum(nil)[:macBytes]
}

// Redeem checks a token-mode token against the call it comes with and
// returns its approval id, to Consume just before the call runs. A denied
// approval reports StateDenied.
func (a *Approvals) Redeem(binding, token string) (string, string, error) {
	if len(token) != TokenLen {
		return "", "", nil
	}
	raw, err := hex.DecodeString(token)
	if err != nil {
		return "", "", nil
	}
	if a.shared != nil {
		return a.redeemShared(binding, raw)
	}
	if err := a.sync(); err != nil {
		return "", "", err
	}
	id := hex.EncodeToString(raw[:idBytes])
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.purgeLocked(now)
	ap, ok := a.byID[id]
	if !ok || ap.binding != binding || !hmac.Equal(a.mac(id, binding, ap.expires), raw[idBytes:]) {
		return "", "", nil
	}
	return id, ap.state, nil
}

// RevokeTool kills every outstanding approval for a tool (its definition
// changed).
func (a *Approvals) RevokeTool(tool string) {
	if a.shared != nil {
		a.revokeShared(tool)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	changed := false
	for _, ap := range slices.Clone(a.order) {
		if ap.tool == tool {
			a.removeLocked(ap)
			changed = true
		}
	}
	if changed {
		a.persistLocked()
	}
}

// Close removes this router's pending file: its approvals die with it.
func (a *Approvals) Close() {
	if a.dir != "" && a.shared == nil {
		_ = os.Remove(a.pendingPath())
	}
}

func (a *Approvals) purgeLocked(now time.Time) {
	for len(a.order) > 0 && !now.Before(a.order[0].expires) {
		a.removeLocked(a.order[0])
	}
}

// sync applies the decisions operators appended since the last look.
func (a *Approvals) sync() error {
	if a.dir == "" {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	decided, err := a.decisions.read()
	if err != nil {
		return err
	}
	changed := false
	for _, d := range decided {
		ap, ok := a.byID[d.ID]
		if !ok || ap.state == StateDenied {
			continue
		}
		switch d.Decision {
		case StateDenied:
			ap.state, changed = StateDenied, true
		case StateApproved:
			if ap.state == StatePending {
				ap.state, changed = StateApproved, true
			}
		}
	}
	if changed {
		a.persistLocked()
	}
	return nil
}

func (a *Approvals) pendingPath() string {
	return filepath.Join(a.dir, "pending-"+a.router+".json")
}

// routerFile is one router's pending file.
type routerFile struct {
	PID       int               `json:"pid"`
	Router    string            `json:"router"`
	Approvals []PendingApproval `json:"approvals"`
}

// PendingApproval is an approval as operators see it. It never carries a
// usable secret: in token mode only the token's first 8 characters.
type PendingApproval struct {
	ID       string `json:"id"`
	Token    string `json:"token,omitempty"`
	ToolName string `json:"toolName"`
	Session  string `json:"session"`
	// Tenant is the session's tenant ("" without tenant scoping).
	Tenant    string `json:"tenant,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	State     string `json:"state"`
	CreatedAt int64  `json:"createdAt"`
	ExpiresAt int64  `json:"expiresAt"`
	// Router is the router that holds it ("<pid>-<random>").
	Router string `json:"router"`
}

func (a *Approvals) persistLocked() {
	if a.dir == "" {
		return
	}
	f := routerFile{PID: os.Getpid(), Router: a.router, Approvals: make([]PendingApproval, 0, len(a.order))}
	for _, ap := range a.order {
		f.Approvals = append(f.Approvals, PendingApproval{ID: ap.id, Token: ap.prefix, ToolName: ap.tool, Session: ap.session, Tenant: ap.tenant,
			Arguments: ap.summary, State: ap.state, CreatedAt: ap.created.UnixMilli(), ExpiresAt: ap.expires.UnixMilli(), Router: a.router})
	}
	// Best effort: a full disk must not block the call path; the file is
	// a view for operators, the state is in memory. It is bounded by
	// MaxPending, so writing it stays cheap however many calls pile up.
	_ = statefile.WriteJSON(a.pendingPath(), f, 0o600)
}

// PendingCount counts the live approvals still waiting for a decision
// (for the metrics gauge); it reads no file.
func (a *Approvals) PendingCount() int {
	if a.shared != nil {
		return a.pendingShared()
	}
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, ap := range a.order {
		if ap.state == StatePending && now.Before(ap.expires) {
			n++
		}
	}
	return n
}

package policy

import (
	"context"
	"crypto/hmac"
	"encoding/hex"
	"errors"
	"time"
)

// Shared approvals.
//
// Replicas behind a balancer serve one set of sessions, so an approval
// filed or minted on one must be honoured on another, once. Share moves
// an Approvals' state into an ApprovalBackend every replica reaches (the
// Redis one of package sharedstate) and gives it the key the replicas
// share; the in-memory maps, the pending-<router>.json file and
// decisions.jsonl are then not used. Without Share nothing changes.

// ApprovalRecord is one approval as a shared backend keeps it.
type ApprovalRecord struct {
	ID      string `json:"id"`
	Tool    string `json:"tool"`
	Session string `json:"session"`
	Tenant  string `json:"tenant,omitempty"`
	Binding string `json:"binding"`
	Summary string `json:"summary,omitempty"`
	State   string `json:"state"`
	// Prefix is, in token mode, the token's first 8 characters and "...".
	Prefix string `json:"prefix,omitempty"`
	// Token approvals are found by id only, never by binding.
	Token   bool      `json:"token,omitempty"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
	// Router is the replica that filed it.
	Router string `json:"router"`
}

// ErrApprovalDenied is Decide's answer to approving a denied approval.
var ErrApprovalDenied = errors.New("approval was denied; it cannot be approved")

// ErrNoApproval is Decide's answer for an id no replica holds.
var ErrNoApproval = errors.New("no such pending approval")

// ApprovalBackend keeps approvals where every replica sees them. Every
// method is atomic against concurrent replicas.
type ApprovalBackend interface {
	// File stores rec until rec.Expires. A non-token approval whose
	// binding already has a live approval is not stored: that one is
	// returned instead, so two replicas asked the same call file one.
	File(ctx context.Context, rec ApprovalRecord) (ApprovalRecord, error)
	// Get returns the live approval id; ok is false when there is none.
	Get(ctx context.Context, id string) (rec ApprovalRecord, ok bool, err error)
	// Consume uses up approval id if it is approved and unexpired. Of all
	// replicas consuming the same id, exactly one gets true.
	Consume(ctx context.Context, id string) (bool, error)
	// RevokeTool deletes every approval of tool.
	RevokeTool(ctx context.Context, tool string) error
	// List returns the live approvals, oldest first.
	List(ctx context.Context) ([]ApprovalRecord, error)
	// Decide records an operator's verdict (StateApproved or StateDenied)
	// on a live approval. A denial always wins: approving a denied one is
	// ErrApprovalDenied; an unknown id is ErrNoApproval.
	Decide(ctx context.Context, id, verdict string) error
}

// sharedTimeout bounds one round trip to the shared backend; a call path
// must not hang on a stalled store.
const sharedTimeout = 5 * time.Second

// Share moves the approvals into backend, signing tokens with key (at
// least 32 bytes, the same on every replica). Called once, before the
// first call.
func (a *Approvals) Share(backend ApprovalBackend, key []byte) error {
	if len(key) < 32 {
		return errors.New("the shared approval key must be at least 32 bytes")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.shared = backend
	a.key = append([]byte(nil), key...)
	return nil
}

func sharedCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), sharedTimeout)
}

func (a *Approvals) askShared(r Request) (Outcome, error) {
	ctx, cancel := sharedCtx()
	defer cancel()
	now := a.now()
	id := randomHex(idBytes)
	rec, err := a.shared.File(ctx, ApprovalRecord{ID: id, Tool: r.Tool, Session: r.Session, Tenant: r.Tenant, Binding: r.Binding,
		Summary: r.Summary, State: StatePending, Created: now, Expires: now.Add(a.ttl), Router: a.router})
	if err != nil {
		return Outcome{}, sharedError(err)
	}
	// File hands back a live approval of the same binding (another
	// replica's, or this call's earlier ask) instead of storing ours:
	// only ours is new, so the operator hears of each approval once.
	return Outcome{ID: rec.ID, State: rec.State, New: rec.ID == id}, nil
}

func (a *Approvals) mintShared(r Request) (string, error) {
	ctx, cancel := sharedCtx()
	defer cancel()
	now := a.now()
	id := randomHex(idBytes)
	expires := now.Add(a.ttl)
	token := id + hex.EncodeToString(a.mac(id, r.Binding, expires))
	_, err := a.shared.File(ctx, ApprovalRecord{ID: id, Tool: r.Tool, Session: r.Session, Tenant: r.Tenant, Binding: r.Binding, Summary: r.Summary,
		State: StateApproved, Prefix: token[:8] + "...", Token: true, Created: now, Expires: expires, Router: a.router})
	if err != nil {
		return "", sharedError(err)
	}
	return token, nil
}

func (a *Approvals) redeemShared(binding string, raw []byte) (string, string, error) {
	ctx, cancel := sharedCtx()
	defer cancel()
	id := hex.EncodeToString(raw[:idBytes])
	rec, ok, err := a.shared.Get(ctx, id)
	if err != nil {
		return "", "", sharedError(err)
	}
	if !ok || !rec.Token || rec.Binding != binding || !a.now().Before(rec.Expires) ||
		!hmac.Equal(a.mac(id, binding, rec.Expires), raw[idBytes:]) {
		return "", "", nil
	}
	return id, rec.State, nil
}

func (a *Approvals) consumeShared(id string) bool {
	ctx, cancel := sharedCtx()
	defer cancel()
	ok, err := a.shared.Consume(ctx, id)
	return err == nil && ok
}

func (a *Approvals) revokeShared(tool string) {
	ctx, cancel := sharedCtx()
	defer cancel()
	_ = a.shared.RevokeTool(ctx, tool)
}

// pendingShared counts the approvals every replica holds for an
// operator; an unreachable store counts none.
func (a *Approvals) pendingShared() int {
	ctx, cancel := sharedCtx()
	defer cancel()
	recs, err := a.shared.List(ctx)
	if err != nil {
		return 0
	}
	n := 0
	for _, r := range recs {
		if r.State == StatePending {
			n++
		}
	}
	return n
}

func sharedError(err error) error {
	return errors.New("approvals cannot be checked (shared store unavailable: " + err.Error() + "); nothing approval-gated runs until it answers")
}

// ListShared is ListPending for replicas sharing backend: the live
// approvals as operators see them, oldest first.
func ListShared(ctx context.Context, backend ApprovalBackend) ([]PendingApproval, error) {
	recs, err := backend.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]PendingApproval, 0, len(recs))
	for _, r := range recs {
		out = append(out, PendingApproval{ID: r.ID, Token: r.Prefix, ToolName: r.Tool, Session: r.Session, Tenant: r.Tenant, Arguments: r.Summary,
			State: r.State, CreatedAt: r.Created.UnixMilli(), ExpiresAt: r.Expires.UnixMilli(), Router: r.Router})
	}
	return out, nil
}

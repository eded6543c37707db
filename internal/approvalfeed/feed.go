// Package approvalfeed carries approvals between routers and the
// dashboard over a WebSocket, for routers whose EVOKORE_HOME the
// dashboard cannot read (another host, another user, a container).
//
// The router side is Handler, mounted by the HTTP router at
// /ws/approvals behind the guard (package httpguard): it streams the
// pending approvals of every router under its EVOKORE_HOME that belong to
// the caller's tenant, and records the approve and deny decisions the
// caller's role allows, the same way `evokore approvals approve|deny`
// does. The
// dashboard side is Dial. Routers on the dashboard's own machine need
// neither: the dashboard reads their approval files directly.
//
// Messages are JSON objects with a "type":
//
//	server → client  {"type":"snapshot","approvals":[…]}   on connect and on every change
//	                 {"type":"result","ref":R,"ok":true}     a decision was recorded
//	                 {"type":"result","ref":R,"ok":false,"error":E}
//	                 {"type":"error","message":E}            the approvals cannot be read
//	                 {"type":"pong"}
//	client → server  {"type":"approve","id":ID,"ref":R}     ID: the full 16-hex approval id
//	                 {"type":"deny","id":ID,"ref":R}
//	                 {"type":"ping"}
//
// Unlike EVOKORE-MCP's feed, approvals are named by their full id, never
// a prefix, and no message carries anything that could approve a call
// by itself (the approval files hold no secret).
package approvalfeed

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/evokore/evokore/internal/httpguard"
	"github.com/evokore/evokore/internal/policy"
)

// Roles, lowest first. They are the dashboard's roles: readonly may look
// at sessions, developer may look at and deny approvals, admin may also
// approve them and read the audit log.
const (
	RoleReadonly  = "readonly"
	RoleDeveloper = "developer"
	RoleAdmin     = "admin"
)

// RoleRank orders roles; an unknown role ranks below readonly.
func RoleRank(role string) int {
	switch role {
	case RoleReadonly:
		return 1
	case RoleDeveloper:
		return 2
	case RoleAdmin:
		return 3
	}
	return 0
}

// VerdictRole is the least role that may record verdict. Denying is the
// safe direction, so a developer may deny; approving lets a gated call
// run, so it takes an admin.
func VerdictRole(verdict string) string {
	if verdict == policy.StateDenied {
		return RoleDeveloper
	}
	return RoleAdmin
}

var idPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{16}$`) })

// ValidID reports whether id has the shape of an approval id (16
// lower-case hex characters).
func ValidID(id string) bool { return idPattern().MatchString(id) }

// Message is one frame of the feed, either direction.
type Message struct {
	Type      string                   `json:"type"`
	Approvals []policy.PendingApproval `json:"approvals,omitempty"`
	ID        string                   `json:"id,omitempty"`
	Ref       string                   `json:"ref,omitempty"`
	OK        bool                     `json:"ok,omitempty"`
	Error     string                   `json:"error,omitempty"`
	Message   string                   `json:"message,omitempty"`
}

// Pending lists the live approvals under home, never nil.
func Pending(home string, now time.Time) ([]policy.PendingApproval, error) {
	list, err := policy.ListPending(home, now)
	if list == nil {
		list = []policy.PendingApproval{}
	}
	return list, err
}

// Visible keeps the approvals who may see: those of its own tenant.
func Visible(list []policy.PendingApproval, who httpguard.Caller) []policy.PendingApproval {
	out := []policy.PendingApproval{}
	for _, p := range list {
		if who.Owns(p.Tenant) {
			out = append(out, p)
		}
	}
	return out
}

// owned reports whether approval id is live under home and who's to
// decide.
func owned(home string, now time.Time, id string, who httpguard.Caller) bool {
	list, err := policy.ListPending(home, now)
	if err != nil {
		// Decide reports the unreadable file itself.
		return true
	}
	return slices.ContainsFunc(Visible(list, who), func(p policy.PendingApproval) bool { return p.ID == id })
}

// Changes reports, coalesced, every change to the approval files under
// home, plus a tick every interval so expiries and routers that died
// without a word are noticed too. The channel closes when ctx ends. The
// approvals directory is created (0700) if missing, so a dashboard
// started before any router still sees the first one's approvals.
func Changes(ctx context.Context, home string, interval time.Duration) (<-chan struct{}, error) {
	dir := filepath.Join(home, "approvals")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := w.Add(dir); err != nil {
		_ = w.Close()
		return nil, err
	}
	out := make(chan struct{}, 1)
	notify := func() {
		select {
		case out <- struct{}{}:
		default:
		}
	}
	go func() {
		defer close(out)
		defer w.Close()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-w.Events:
				if !ok {
					return
				}
				notify()
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				// An overflow lost events: look again.
				if errors.Is(err, fsnotify.ErrEventOverflow) {
					notify()
				}
			case <-tick.C:
				notify()
			}
		}
	}()
	return out, nil
}

// snapshotBytes encodes a snapshot, or the error frame when the
// approvals cannot be read (an unreadable decisions file fails closed in
// the routers too, so the operator must see it).
func snapshotBytes(home string, now time.Time, who httpguard.Caller) []byte {
	list, err := Pending(home, now)
	list = Visible(list, who)
	var b []byte
	if err != nil {
		b, _ = json.Marshal(Message{Type: "error", Message: err.Error()})
	} else {
		b, _ = json.Marshal(Message{Type: "snapshot", Approvals: list})
	}
	return b
}

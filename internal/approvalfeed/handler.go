package approvalfeed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/evokore/evokore/internal/httpguard"
	"github.com/evokore/evokore/internal/operatorkey"
	"github.com/evokore/evokore/internal/policy"
)

// Options configure Handler.
type Options struct {
	// Home is the EVOKORE_HOME whose routers' approvals are served.
	Home string
	// OriginPatterns are the browser origins allowed besides the
	// request's own host (see websocket.AcceptOptions). The dashboard
	// connects from Go, without an Origin, so none are needed for it.
	OriginPatterns []string
	// MaxClients bounds concurrent connections (default 16); more get 503.
	MaxClients int
	// Interval is how often the approvals are looked at without a file
	// event, for expiries (default 2s).
	Interval time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// maxFrame bounds a client frame: decisions are tiny.
const maxFrame = 4096

// Handler serves the feed at whatever path it is mounted on, behind the
// guard (package httpguard): the guard's Caller is who connects, and a
// request without one is refused. A caller sees and decides only the
// approvals of its own tenant, with its own role, and decides only on a
// connection that sent the operator key of Home (the
// Evokore-Operator-Key header, package operatorkey): the bearer token an
// MCP client holds is no operator's, and neither is a same-user process
// that cannot read the key. A wrong key is refused outright (403).
func Handler(opts Options) http.Handler {
	if opts.MaxClients <= 0 {
		opts.MaxClients = 16
	}
	if opts.Interval <= 0 {
		opts.Interval = 2 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	var clients atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who, ok := httpguard.CallerFrom(r.Context())
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="evokore approvals"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if RoleRank(who.Role) < RoleRank(RoleDeveloper) {
			http.Error(w, "the approvals feed needs the developer role", http.StatusForbidden)
			return
		}
		operator := false
		if k := r.Header.Get(operatorkey.Header); k != "" {
			key, err := operatorkey.Load(opts.Home)
			if err != nil || !key.Match(k) {
				http.Error(w, "wrong operator key", http.StatusForbidden)
				return
			}
			operator = true
		}
		if clients.Add(1) > int64(opts.MaxClients) {
			clients.Add(-1)
			http.Error(w, "too many approval feed clients", http.StatusServiceUnavailable)
			return
		}
		defer clients.Add(-1)
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: opts.OriginPatterns})
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(maxFrame)
		serve(r.Context(), c, opts, who, operator)
	})
}

func serve(ctx context.Context, c *websocket.Conn, opts Options, who httpguard.Caller, operator bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changes, err := Changes(ctx, opts.Home, opts.Interval)
	if err != nil {
		b, _ := json.Marshal(Message{Type: "error", Message: "cannot watch approvals: " + err.Error()})
		_ = c.Write(ctx, websocket.MessageText, b)
		c.Close(websocket.StatusInternalError, "cannot watch approvals")
		return
	}
	out := make(chan []byte, 8)
	// One reader: decisions and pings. Its replies go through out, so
	// only the writer loop below writes to the connection.
	go func() {
		defer cancel()
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			var m Message
			if json.Unmarshal(data, &m) != nil {
				continue // malformed frames are ignored, as in EVOKORE-MCP
			}
			reply := handle(m, opts, who, operator)
			if reply == nil {
				continue
			}
			b, _ := json.Marshal(reply)
			select {
			case out <- b:
			case <-ctx.Done():
				return
			}
		}
	}()
	var last []byte
	send := func(b []byte) bool {
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		defer wcancel()
		return c.Write(wctx, websocket.MessageText, b) == nil
	}
	sendSnapshot := func() bool {
		b := snapshotBytes(opts.Home, opts.Now(), who)
		if bytes.Equal(b, last) {
			return true
		}
		last = b
		return send(b)
	}
	if !sendSnapshot() {
		return
	}
	for {
		select {
		case <-ctx.Done():
			c.Close(websocket.StatusNormalClosure, "")
			return
		case _, ok := <-changes:
			if !ok || !sendSnapshot() {
				return
			}
		case b := <-out:
			if !send(b) {
				return
			}
			// A decision changes the approvals: show it at once.
			if !sendSnapshot() {
				return
			}
		}
	}
}

// NoOperatorKey is the refusal of a verdict sent on a connection that
// did not send the operator key.
const NoOperatorKey = "deciding needs the operator key of the router's EVOKORE_HOME (" + operatorkey.File + "), sent as " + operatorkey.Header + " when connecting"

// handle answers one client frame; nil means no reply.
func handle(m Message, opts Options, who httpguard.Caller, operator bool) *Message {
	switch m.Type {
	case "ping":
		return &Message{Type: "pong"}
	case "approve", "deny":
		verdict := policy.StateApproved
		if m.Type == "deny" {
			verdict = policy.StateDenied
		}
		res := &Message{Type: "result", Ref: m.Ref, ID: m.ID}
		switch {
		case !ValidID(m.ID):
			res.Error = "invalid approval id (want the full 16 hex characters)"
		case RoleRank(who.Role) < RoleRank(VerdictRole(verdict)):
			res.Error = m.Type + " needs the " + VerdictRole(verdict) + " role"
		case !operator:
			res.Error = NoOperatorKey
		case !owned(opts.Home, opts.Now(), m.ID, who):
			// Another tenant's approval is answered as one that does not
			// exist: its existence is not the caller's to learn.
			res.Error = fmt.Sprintf("no pending approval %q", m.ID)
		default:
			if err := policy.Decide(opts.Home, m.ID, verdict, opts.Now()); err != nil {
				res.Error = err.Error()
			} else {
				res.OK = true
			}
		}
		return res
	}
	return nil
}

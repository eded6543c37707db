package approvalfeed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/evokore/evokore/internal/httpguard"
	"github.com/evokore/evokore/internal/operatorkey"
	"github.com/evokore/evokore/internal/policy"
)

// Feed is the dashboard's connection to one router's feed. Run keeps it
// connected (reconnecting with a backoff from 1 s to 30 s, as
// EVOKORE-MCP's page did); State reads the last snapshot.
type Feed struct {
	url      string
	token    string
	key      string // the operator key, sent where it cannot be overheard
	onChange func()

	mu        sync.Mutex
	conn      *websocket.Conn
	approvals []policy.PendingApproval
	connected bool
	lastErr   string
	seq       int
	waiters   map[string]chan Message
}

// NewFeed prepares a feed from a ws:// or wss:// URL; token, if set, is
// sent as a bearer token (never in the URL, where logs would keep it).
// key, if set, is the operator key, which the router asks of a
// connection before it records a verdict; it is sent over wss:// or to
// this machine's loopback only, never in clear text across a network
// (without it the feed shows approvals and its decisions are refused).
// onChange is called after every change of State.
func NewFeed(rawURL, token, key string, onChange func()) *Feed {
	if onChange == nil {
		onChange = func() {}
	}
	if u, err := url.Parse(rawURL); err != nil || (u.Scheme != "wss" && !httpguard.IsLoopback(u.Hostname())) {
		key = ""
	}
	return &Feed{url: rawURL, token: token, key: key, onChange: onChange, waiters: map[string]chan Message{}}
}

// URL is the feed's address as shown to operators: without a user or
// password, and without its query (either may carry a credential).
func (f *Feed) URL() string {
	u, err := url.Parse(f.url)
	if err != nil {
		return "(unparsable feed URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// State returns the approvals of the last snapshot (none while
// disconnected), whether the feed is connected, and the last error.
func (f *Feed) State() ([]policy.PendingApproval, bool, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]policy.PendingApproval(nil), f.approvals...), f.connected, f.lastErr
}

// Run connects and reconnects until ctx ends.
func (f *Feed) Run(ctx context.Context) {
	backoff := time.Second
	for ctx.Err() == nil {
		start := time.Now()
		err := f.once(ctx)
		f.mu.Lock()
		f.conn, f.connected, f.approvals = nil, false, nil
		if err != nil && ctx.Err() == nil {
			f.lastErr = err.Error()
		}
		for ref, ch := range f.waiters {
			ch <- Message{Type: "result", Ref: ref, Error: "the router's feed disconnected"}
			delete(f.waiters, ref)
		}
		f.mu.Unlock()
		f.onChange()
		if time.Since(start) > time.Minute {
			backoff = time.Second
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

func (f *Feed) once(ctx context.Context) error {
	hdr := http.Header{}
	if f.token != "" {
		hdr.Set("Authorization", "Bearer "+f.token)
	}
	if f.key != "" {
		hdr.Set(operatorkey.Header, f.key)
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	c, resp, err := websocket.Dial(dctx, f.url, &websocket.DialOptions{HTTPHeader: hdr, HTTPClient: noRedirects})
	cancel()
	if err != nil {
		if resp != nil {
			return fmt.Errorf("connect: HTTP %d", resp.StatusCode)
		}
		// The dial error quotes the whole URL, query and user name
		// included, and it is shown to operators (State): keep only the
		// reason, as URL keeps only what names no credential.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("connect: %w", err)
	}
	defer c.CloseNow()
	// Snapshots are bounded by the routers' MaxPending each.
	c.SetReadLimit(8 << 20)
	f.mu.Lock()
	f.conn, f.connected, f.lastErr = c, true, ""
	f.mu.Unlock()
	f.onChange()
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return err
		}
		var m Message
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		switch m.Type {
		case "snapshot":
			f.mu.Lock()
			f.approvals, f.lastErr = m.Approvals, ""
			f.mu.Unlock()
			f.onChange()
		case "error":
			f.mu.Lock()
			f.approvals, f.lastErr = nil, m.Message
			f.mu.Unlock()
			f.onChange()
		case "result":
			f.mu.Lock()
			if ch, ok := f.waiters[m.Ref]; ok {
				ch <- m
				delete(f.waiters, m.Ref)
			}
			f.mu.Unlock()
		}
	}
}

// noRedirects dials a feed without following a redirect: the token is
// for the router at the configured URL, and net/http would send it on to
// another port of the same host, or from wss:// down to plain http.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Decide sends a verdict (policy.StateApproved or StateDenied) on the
// approval id and waits for the router to record it.
func (f *Feed) Decide(ctx context.Context, id, verdict string) error {
	typ := "approve"
	if verdict == policy.StateDenied {
		typ = "deny"
	}
	ch := make(chan Message, 1)
	f.mu.Lock()
	c := f.conn
	if c == nil {
		f.mu.Unlock()
		return errors.New("the router's approval feed is not connected")
	}
	f.seq++
	ref := strconv.Itoa(f.seq)
	f.waiters[ref] = ch
	f.mu.Unlock()
	b, _ := json.Marshal(Message{Type: typ, ID: id, Ref: ref})
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		f.mu.Lock()
		delete(f.waiters, ref)
		f.mu.Unlock()
		return fmt.Errorf("send to the router: %w", err)
	}
	select {
	case m := <-ch:
		if !m.OK {
			return errors.New(m.Error)
		}
		return nil
	case <-ctx.Done():
		f.mu.Lock()
		delete(f.waiters, ref)
		f.mu.Unlock()
		return ctx.Err()
	}
}

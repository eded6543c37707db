package approvalfeed_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/evokore/evokore/internal/approvalfeed"
	"github.com/evokore/evokore/internal/auth"
	"github.com/evokore/evokore/internal/httpguard"
	"github.com/evokore/evokore/internal/operatorkey"
	"github.com/evokore/evokore/internal/policy"
)

// writePending files one pending approval as a live router (this
// process) would.
func writePending(t *testing.T, home, id string) {
	t.Helper()
	dir := filepath.Join(home, "approvals")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	b, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "router": "t", "approvals": []policy.PendingApproval{{
		ID: id, ToolName: "fx_count", Session: "s", State: policy.StatePending, CreatedAt: now.UnixMilli(), ExpiresAt: now.Add(time.Hour).UnixMilli(), Router: "t"}}})
	if err := os.WriteFile(filepath.Join(dir, "pending-t.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// serveFeed serves the feed over home behind the guard, every caller
// admin of the tenant "" (as `serve --http` without authentication).
func serveFeed(t *testing.T, home string) *httptest.Server {
	t.Helper()
	g := httpguard.New(httpguard.Options{Identify: func(auth.Principal) httpguard.Caller {
		return httpguard.Caller{Role: approvalfeed.RoleAdmin}
	}})
	ts := httptest.NewServer(g.Wrap(approvalfeed.Handler(approvalfeed.Options{Home: home})))
	t.Cleanup(ts.Close)
	return ts
}

func read(t *testing.T, ctx context.Context, c *websocket.Conn) approvalfeed.Message {
	t.Helper()
	_, data, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var m approvalfeed.Message
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The protocol: a snapshot on connect, a new one when the files change,
// malformed frames ignored, ping answered, a decision answered and shown.
func TestFeedProtocol(t *testing.T) {
	home := t.TempDir()
	ts := serveFeed(t, home)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http"), keyHeader(t, home))
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if m := read(t, ctx, c); m.Type != "snapshot" || len(m.Approvals) != 0 {
		t.Fatalf("first frame %+v", m)
	}
	const id = "0011223344556677"
	writePending(t, home, id)
	if m := read(t, ctx, c); m.Type != "snapshot" || len(m.Approvals) != 1 || m.Approvals[0].ID != id {
		t.Fatalf("after a router filed an approval: %+v", m)
	}
	for _, frame := range []string{`{not json`, `{"type":"approve","id":"0011"}`, `{"type":"ping"}`} {
		if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
			t.Fatal(err)
		}
	}
	if m := read(t, ctx, c); m.Type != "result" || m.OK || !strings.Contains(m.Error, "16 hex") {
		t.Errorf("a prefix: %+v", m)
	}
	if m := read(t, ctx, c); m.Type != "pong" {
		t.Errorf("ping: %+v", m)
	}
	_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"deny","id":"`+id+`","ref":"r1"}`))
	// The result, and a snapshot showing the denial, in either order (the
	// file watcher may see the decision first).
	var result, denied bool
	for !result || !denied {
		switch m := read(t, ctx, c); m.Type {
		case "result":
			if !m.OK || m.Ref != "r1" {
				t.Fatalf("deny: %+v", m)
			}
			result = true
		case "snapshot":
			denied = denied || (len(m.Approvals) == 1 && m.Approvals[0].State == policy.StateDenied)
		}
	}
	list, err := policy.ListPending(home, time.Now())
	if err != nil || len(list) != 1 || list[0].State != policy.StateDenied {
		t.Errorf("the decision was not recorded: %+v %v", list, err)
	}
}

// keyHeader dials with home's operator key, as the dashboard does.
func keyHeader(t *testing.T, home string) *websocket.DialOptions {
	t.Helper()
	if _, err := operatorkey.Load(home); err != nil {
		t.Fatal(err)
	}
	k, err := operatorkey.Read(home)
	if err != nil {
		t.Fatal(err)
	}
	return &websocket.DialOptions{HTTPHeader: http.Header{operatorkey.Header: {k}}}
}

// A connection that did not send the operator key sees the approvals and
// decides none, whatever its role (an admin here, as every caller of a
// router without authentication is): a same-user process that cannot
// read the key cannot approve through the feed. A wrong key is refused
// at the door.
func TestFeedDecidesOnlyWithTheOperatorKey(t *testing.T) {
	home := t.TempDir()
	ts := serveFeed(t, home)
	ws := "ws" + strings.TrimPrefix(ts.URL, "http")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const id = "0011223344556677"
	writePending(t, home, id)
	c, _, err := websocket.Dial(ctx, ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if m := read(t, ctx, c); m.Type != "snapshot" || len(m.Approvals) != 1 {
		t.Fatalf("first frame without the key: %+v", m)
	}
	for _, verdict := range []string{"approve", "deny"} {
		_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"`+verdict+`","id":"`+id+`","ref":"r"}`))
		if m := read(t, ctx, c); m.Type != "result" || m.OK || m.Error != approvalfeed.NoOperatorKey {
			t.Errorf("%s without the key: %+v", verdict, m)
		}
	}
	if list, _ := policy.ListPending(home, time.Now()); len(list) != 1 || list[0].State != policy.StatePending {
		t.Errorf("a verdict without the key was recorded: %+v", list)
	}
	wrong := &websocket.DialOptions{HTTPHeader: http.Header{operatorkey.Header: {strings.Repeat("0", 64)}}}
	if _, res, err := websocket.Dial(ctx, ws, wrong); err == nil || res == nil || res.StatusCode != 403 {
		t.Errorf("a wrong key: %v %v", res, err)
	}
	ok, _, err := websocket.Dial(ctx, ws, keyHeader(t, home))
	if err != nil {
		t.Fatal(err)
	}
	defer ok.CloseNow()
	read(t, ctx, ok)
	_ = ok.Write(ctx, websocket.MessageText, []byte(`{"type":"approve","id":"`+id+`","ref":"r"}`))
	for {
		if m := read(t, ctx, ok); m.Type == "result" {
			if !m.OK {
				t.Errorf("approve with the key: %+v", m)
			}
			break
		}
	}
}

// A browser page of another origin cannot open the feed.
func TestFeedRefusesCrossOriginBrowsers(t *testing.T) {
	ts := serveFeed(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := map[string][]string{"Origin": {"http://evil.example"}}
	_, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.URL, "http"), &websocket.DialOptions{HTTPHeader: h})
	if err == nil || res == nil || res.StatusCode != 403 {
		t.Errorf("cross-origin dial: %v %v", res, err)
	}
}

// A feed's address is shown without the credentials it may carry.
func TestFeedURLHidesCredentials(t *testing.T) {
	f := approvalfeed.NewFeed("wss://ops:hunter2@router.example:3100/ws/approvals?token=abc", "", "", nil)
	if got := f.URL(); got != "wss://router.example:3100/ws/approvals" {
		t.Errorf("shown as %q", got)
	}
}

package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/events"
	"github.com/evokore/evokore/internal/webhook"
)

type post struct {
	header http.Header
	body   []byte
}

// collector records every post; status answers the n-th post (nil: 200).
type collector struct {
	mu     sync.Mutex
	posts  []post
	status func(n int) int
	got    chan struct{}
}

func newCollector() *collector { return &collector{got: make(chan struct{}, 100)} }

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.posts = append(c.posts, post{r.Header.Clone(), b})
	n := len(c.posts)
	c.mu.Unlock()
	if c.status != nil {
		w.WriteHeader(c.status(n))
	}
	c.got <- struct{}{}
}

func (c *collector) all() []post {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]post(nil), c.posts...)
}

func closeNow(s *webhook.Sender) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.Close(ctx)
}

// receiverSignature is the X-EVOKORE-Signature-256 a receiver expects, written
// from the package doc, not from Sign: "sha256=" and the hex HMAC-SHA256
// under the secret of `<timestamp>.<nonce>.<body>`.
func receiverSignature(secret, timestamp, nonce string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp + "." + nonce + "." + string(body)))
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// legacyReceiverSignature is the X-EVOKORE-Signature a receiver written
// for EVOKORE-MCP expects: the bare hex HMAC-SHA256 of `<timestamp>.<body>`.
func legacyReceiverSignature(secret, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp + "." + string(body)))
	return hex.EncodeToString(m.Sum(nil))
}

// The signature of fixed parts is a known answer: the hex was computed
// outside Go, with
//
//	printf '%s' '1767225600.n0nce-4f2a.{"id":"n0nce-4f2a","event":"tool.called"}' |
//	  openssl dgst -sha256 -hmac 'k3y-for-the-record'
//
// and Verify accepts exactly it.
func TestSignatureKnownAnswer(t *testing.T) {
	const (
		key, ts, nonce = "k3y-for-the-record", "1767225600", "n0nce-4f2a"
		body           = `{"id":"n0nce-4f2a","event":"tool.called"}`
		want           = "sha256=5002998ca981b104daf6d3558aa8428ae5e6df97b65d47dad42d8c2b0619917d"
	)
	if got := receiverSignature(key, ts, nonce, []byte(body)); got != want {
		t.Fatalf("the test's own HMAC = %q, openssl's = %q", got, want)
	}
	if got := webhook.Sign(key, ts, nonce, []byte(body)); got != want {
		t.Errorf("Sign = %q, want %q", got, want)
	}
	if !webhook.Verify(key, ts, nonce, []byte(body), want) {
		t.Error("Verify refuses the known answer")
	}
	for name, v := range map[string]bool{
		"another key":       webhook.Verify("other", ts, nonce, []byte(body), want),
		"another timestamp": webhook.Verify(key, "1767225601", nonce, []byte(body), want),
		"another nonce":     webhook.Verify(key, ts, "n0nce-4f2b", []byte(body), want),
		"another body":      webhook.Verify(key, ts, nonce, []byte(body+" "), want),
	} {
		if v {
			t.Errorf("Verify accepts the signature with %s", name)
		}
	}
}

// EVOKORE-MCP's signature of fixed parts is a known answer, computed
// outside Go with
//
//	printf '%s' '1767225600.{"id":"n0nce-4f2a","event":"tool.called"}' |
//	  openssl dgst -sha256 -hmac 'k3y-for-the-record'
func TestLegacySignatureKnownAnswer(t *testing.T) {
	const (
		key, ts = "k3y-for-the-record", "1767225600"
		body    = `{"id":"n0nce-4f2a","event":"tool.called"}`
		want    = "7f87341c21a656cfad8263e79d93115996aa6b66e333e8629cae345eaafa8e9c"
	)
	if got := legacyReceiverSignature(key, ts, []byte(body)); got != want {
		t.Fatalf("the test's own HMAC = %q, openssl's = %q", got, want)
	}
	if got := webhook.SignLegacy(key, ts, []byte(body)); got != want {
		t.Errorf("SignLegacy = %q, want %q", got, want)
	}
}

func TestDeliveriesAreSignedAndFiltered(t *testing.T) {
	only, all := newCollector(), newCollector()
	a, b := httptest.NewServer(only), httptest.NewServer(all)
	defer a.Close()
	defer b.Close()
	s := webhook.New(webhook.Options{AllowPrivate: true, Hooks: []config.Webhook{
		{URL: a.URL, Events: []string{"tool_call"}, Secret: "s3cret-value"},
		{URL: b.URL},
	}})
	when := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	s.Handle(events.Event{Time: when, Type: events.SessionStart, Session: "stdio-1", Role: "ops"})
	s.Handle(events.Event{Time: when, Type: events.ToolCall, Session: "stdio-1", Tool: "fx_echo", Outcome: "ok"})
	closeNow(s)

	posts := only.all()
	if len(posts) != 1 {
		t.Fatalf("the tool_call webhook got %d posts", len(posts))
	}
	p := posts[0]
	// What a receiver does, from the documented format alone.
	if got, want := p.header.Get(webhook.HeaderSignature256), receiverSignature("s3cret-value", p.header.Get(webhook.HeaderTimestamp), p.header.Get(webhook.HeaderNonce), p.body); got != want {
		t.Errorf("signature %q, a receiver computes %q", got, want)
	}
	// What a receiver written for EVOKORE-MCP does, with the same post.
	if got, want := p.header.Get("X-EVOKORE-Signature"), legacyReceiverSignature("s3cret-value", p.header.Get("X-EVOKORE-Timestamp"), p.body); got != want {
		t.Errorf("EVOKORE-MCP's signature %q, its receiver computes %q", got, want)
	}
	var body webhook.Body
	if err := json.Unmarshal(p.body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Event != events.ToolCall || body.Data.Tool != "fx_echo" || body.Timestamp != "2026-05-01T10:00:00Z" ||
		body.ID != p.header.Get(webhook.HeaderDelivery) || p.header.Get(webhook.HeaderEvent) != "tool_call" {
		t.Errorf("post = %s %v", p.body, p.header)
	}
	if got := all.all(); len(got) != 2 || (got[0].header.Get(webhook.HeaderSignature) != "" || got[0].header.Get(webhook.HeaderSignature256) != "") {
		t.Errorf("the unfiltered, unsigned webhook got %d posts", len(got))
	}
	if st := s.Stats(); st.Delivered != 3 || st.Failed != 0 {
		t.Errorf("stats = %+v", st)
	}
}

func TestFailedPostsAreRetriedWithBackoff(t *testing.T) {
	c := newCollector()
	c.status = func(n int) int {
		if n < 3 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	}
	srv := httptest.NewServer(c)
	defer srv.Close()
	s := webhook.New(webhook.Options{AllowPrivate: true, Backoff: time.Millisecond, Hooks: []config.Webhook{{URL: srv.URL, Secret: "k3y"}}})
	s.Handle(events.Event{Type: events.Reload})
	closeNow(s)
	posts := c.all()
	if len(posts) != 3 || s.Stats().Delivered != 1 {
		t.Fatalf("%d attempts, stats %+v", len(posts), s.Stats())
	}
	if posts[0].header.Get(webhook.HeaderDelivery) != posts[2].header.Get(webhook.HeaderDelivery) ||
		posts[0].header.Get(webhook.HeaderNonce) == posts[2].header.Get(webhook.HeaderNonce) {
		t.Error("a retry is the same delivery with a fresh nonce")
	}

	// A 4xx other than 408/429 is final.
	c2 := newCollector()
	c2.status = func(int) int { return http.StatusBadRequest }
	srv2 := httptest.NewServer(c2)
	defer srv2.Close()
	s2 := webhook.New(webhook.Options{AllowPrivate: true, Backoff: time.Millisecond, Hooks: []config.Webhook{{URL: srv2.URL}}})
	s2.Handle(events.Event{Type: events.Reload})
	closeNow(s2)
	if n := len(c2.all()); n != 1 || s2.Stats().Failed != 1 {
		t.Errorf("400: %d attempts, stats %+v", n, s2.Stats())
	}
}

func TestPrivateReceiversNeedTheOptIn(t *testing.T) {
	c := newCollector()
	srv := httptest.NewServer(c)
	defer srv.Close()
	s := webhook.New(webhook.Options{Backoff: time.Millisecond, Hooks: []config.Webhook{{URL: srv.URL}}})
	s.Handle(events.Event{Type: events.Reload})
	closeNow(s)
	if n := len(c.all()); n != 0 || s.Stats().Failed != 1 {
		t.Errorf("a loopback receiver got %d posts without EVOKORE_WEBHOOKS_ALLOW_PRIVATE; stats %+v", n, s.Stats())
	}
}

func TestAFullQueueDropsTheOldest(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	}))
	defer srv.Close()
	defer close(release)
	s := webhook.New(webhook.Options{AllowPrivate: true, Queue: 2, Retries: -1, Hooks: []config.Webhook{{URL: srv.URL}}})
	s.Handle(events.Event{Type: events.Reload, Detail: "0"})
	<-entered // the worker holds the first post; the queue is empty
	for i := 1; i <= 5; i++ {
		s.Handle(events.Event{Type: events.Reload, Detail: string(rune('0' + i))})
	}
	if d := s.Stats().Dropped; d != 3 {
		t.Errorf("dropped %d, want 3 (5 queued into 2 places)", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Close(ctx)
}

// A delivery's body is what json.Marshal wrote of it, arguments and
// escapes included, so signatures receivers computed stay valid.
func TestBodyAppendJSONIsMarshal(t *testing.T) {
	lat := 1.25
	when := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	for _, b := range []webhook.Body{
		{},
		{ID: "n1", Event: events.ToolCall, Timestamp: when.Format(time.RFC3339Nano), Data: events.Event{Time: when,
			Type: events.ToolCall, Session: "stdio-1", Tool: "fx_<echo>", Outcome: "ok", LatencyMs: &lat,
			Args: json.RawMessage(`{"a":"\u003cb\u003e","n":[1,2]}`), Detail: "line\nbreak \u2028 \xff", Pid: 7}},
	} {
		want, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := b.AppendJSON(nil); !ok || string(got) != string(want) {
			t.Errorf("AppendJSON = %s\nMarshal wrote %s", got, want)
		}
	}
}

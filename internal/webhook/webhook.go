// Package webhook posts router events (package events) to the webhooks of
// mcp.config.json: `webhooks: [{url, events, secret}]`.
//
// Each delivery is a POST of a JSON body
//
//	{"id": "<nonce>", "event": "<type>", "timestamp": "<RFC 3339 UTC>", "data": {<the event>}}
//
// with the headers
//
//	Content-Type:        application/json
//	X-EVOKORE-Event:     <type>
//	X-EVOKORE-Delivery:  <nonce>           (the same on every retry)
//	X-EVOKORE-Timestamp: <unix seconds>    (of this attempt)
//	X-EVOKORE-Nonce:     <nonce>
//	X-EVOKORE-Signature-256: sha256=<hex of `<timestamp>.<nonce>.<body>`>
//	X-EVOKORE-Signature:     <hex of `<timestamp>.<body>`>
//
// (both signatures only when the webhook has a secret), where each <hex>
// is the lower-case hex HMAC-SHA256, keyed by the webhook's secret, of the
// bytes shown. A receiver recomputes X-EVOKORE-Signature-256 over the raw
// body, compares in constant time, rejects timestamps far from its clock
// and nonces it has seen: that stops forged, altered and replayed posts.
// X-EVOKORE-Signature is EVOKORE-MCP's header, in its format, so a
// receiver written for EVOKORE-MCP accepts evokore's deliveries unchanged;
// it does not bind the nonce.
//
// Delivery never holds up a tool call: Handle only queues. Each webhook
// has its own bounded queue (a dead receiver does not delay a live one);
// when it is full the oldest delivery is dropped and counted. A worker per
// webhook posts in order, with a 10 s timeout per attempt and up to 3
// retries with exponential backoff (0.5 s, 1 s, 2 s) on network errors,
// 408, 429 and 5xx; other answers are final. Redirects are not followed.
// Receivers must be public addresses unless EVOKORE_WEBHOOKS_ALLOW_PRIVATE
// is set (package netguard, the policy fetch_skill follows).
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/events"
	"github.com/evokore/evokore/internal/jsonenc"
	"github.com/evokore/evokore/internal/netguard"
)

// Header names of a delivery.
const (
	HeaderEvent     = "X-EVOKORE-Event"
	HeaderDelivery  = "X-EVOKORE-Delivery"
	HeaderTimestamp = "X-EVOKORE-Timestamp"
	HeaderNonce     = "X-EVOKORE-Nonce"
	// HeaderSignature256 is evokore's signature (Sign); HeaderSignature
	// EVOKORE-MCP's (SignLegacy).
	HeaderSignature256 = "X-EVOKORE-Signature-256"
	HeaderSignature    = "X-EVOKORE-Signature"
)

// Defaults of a Sender.
const (
	DefaultQueue   = 1000
	DefaultRetries = 3
	DefaultTimeout = 10 * time.Second
	DefaultBackoff = 500 * time.Millisecond
)

// AllowPrivateSetting is the variable that lets webhooks reach private
// addresses.
const AllowPrivateSetting = "EVOKORE_WEBHOOKS_ALLOW_PRIVATE"

// Options configure a Sender.
type Options struct {
	// Hooks are the webhooks, placeholders resolved.
	Hooks []config.Webhook
	// AllowPrivate is EVOKORE_WEBHOOKS_ALLOW_PRIVATE.
	AllowPrivate bool
	// Queue bounds each webhook's queue; Retries, Timeout and Backoff
	// shape delivery. Zero takes the defaults (Retries < 0 means none).
	Queue   int
	Retries int
	Timeout time.Duration
	Backoff time.Duration
	Log     *slog.Logger
}

// Body is what a delivery posts.
type Body struct {
	ID        string       `json:"id"`
	Event     events.Type  `json:"event"`
	Timestamp string       `json:"timestamp"`
	Data      events.Event `json:"data"`
}

// AppendJSON appends b as json.Marshal writes it, through
// events.AppendJSON; ok is false where Marshal fails.
func (b Body) AppendJSON(dst []byte) (out []byte, ok bool) {
	buf := jsonenc.String(append(dst, `{"id":`...), b.ID)
	buf = jsonenc.String(append(buf, `,"event":`...), b.Event)
	buf = jsonenc.String(append(buf, `,"timestamp":`...), b.Timestamp)
	if buf, ok = events.AppendJSON(append(buf, `,"data":`...), b.Data); !ok {
		return dst, false
	}
	return append(buf, '}'), true
}

// Sign returns the X-EVOKORE-Signature-256 value of a body: "sha256=" and the
// hex HMAC-SHA256 of `<timestamp>.<nonce>.<body>` under secret.
func Sign(secret, timestamp, nonce string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write([]byte(nonce))
	m.Write([]byte{'.'})
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether signature is the signature of the request parts
// under secret, comparing in constant time.
func Verify(secret, timestamp, nonce string, body []byte, signature string) bool {
	return hmac.Equal([]byte(Sign(secret, timestamp, nonce, body)), []byte(signature))
}

// SignLegacy returns the X-EVOKORE-Signature value of a body, as
// EVOKORE-MCP computes it: the bare hex HMAC-SHA256 of `<timestamp>.<body>`
// under secret.
func SignLegacy(secret, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Stats count deliveries across all webhooks.
type Stats struct {
	Delivered, Failed, Dropped int64
}

// Sender queues and posts events.
type Sender struct {
	opts   Options
	client *http.Client
	log    *slog.Logger
	hooks  []*hook
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	start  sync.Once

	delivered, failed, dropped atomic.Int64
}

type delivery struct {
	id   string
	typ  events.Type
	body []byte
}

// hook is one webhook's queue and worker.
type hook struct {
	cfg    config.Webhook
	events map[events.Type]bool // nil: every event
	mu     sync.Mutex
	queue  []delivery // oldest first
	closed bool
	wake   chan struct{}
}

// New builds a sender; its workers, one per valid webhook, start with the
// first event. A webhook whose URL is not http(s) is reported and skipped.
func New(o Options) *Sender {
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.Retries == 0 {
		o.Retries = DefaultRetries
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	s := &Sender{opts: o, log: o.Log}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.client = &http.Client{
		Timeout: o.Timeout,
		Transport: &http.Transport{
			Proxy:                 nil, // a proxy would hide the receiver's address from the check
			DialContext:           netguard.Dialer(o.Timeout, o.AllowPrivate, AllowPrivateSetting).DialContext,
			TLSHandshakeTimeout:   o.Timeout,
			ResponseHeaderTimeout: o.Timeout,
			MaxIdleConnsPerHost:   2,
			ForceAttemptHTTP2:     true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	for i, w := range o.Hooks {
		u, err := url.Parse(w.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			s.log.Warn("[EVOKORE] Ignoring a webhook: its url is not an http(s) URL", "index", i)
			continue
		}
		h := &hook{cfg: w, wake: make(chan struct{}, 1)}
		if len(w.Events) > 0 {
			h.events = map[events.Type]bool{}
			for _, e := range w.Events {
				h.events[events.Type(e)] = true
			}
		}
		s.hooks = append(s.hooks, h)
	}
	return s
}

var _ events.Sink = (*Sender)(nil)

// Handle queues e for every webhook subscribed to its type. It never
// blocks: a full queue drops its oldest delivery.
func (s *Sender) Handle(e events.Event) {
	s.start.Do(func() {
		for _, h := range s.hooks {
			s.wg.Add(1)
			go s.work(h)
		}
	})
	var body []byte
	var id string
	for _, h := range s.hooks {
		if h.events != nil && !h.events[e.Type] {
			continue
		}
		if body == nil {
			id = nonce()
			var ok bool
			if body, ok = (Body{ID: id, Event: e.Type, Timestamp: e.Time.UTC().Format(time.RFC3339Nano), Data: e}).AppendJSON(nil); !ok {
				return
			}
		}
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			continue
		}
		if len(h.queue) >= s.opts.Queue {
			h.queue = slices.Delete(h.queue, 0, 1)
			s.dropped.Add(1)
		}
		h.queue = append(h.queue, delivery{id: id, typ: e.Type, body: body})
		h.mu.Unlock()
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
}

// Stats returns the delivery counters.
func (s *Sender) Stats() Stats {
	return Stats{Delivered: s.delivered.Load(), Failed: s.failed.Load(), Dropped: s.dropped.Load()}
}

// Close stops taking events, gives the workers until ctx ends to post
// what is queued, then abandons the rest.
func (s *Sender) Close(ctx context.Context) {
	for _, h := range s.hooks {
		h.mu.Lock()
		h.closed = true
		h.mu.Unlock()
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.cancel()
		<-done
	}
	s.cancel()
	s.client.CloseIdleConnections()
}

func (s *Sender) work(h *hook) {
	defer s.wg.Done()
	for {
		h.mu.Lock()
		if len(h.queue) == 0 {
			closed := h.closed
			h.mu.Unlock()
			if closed {
				return
			}
			select {
			case <-h.wake:
			case <-s.ctx.Done():
				return
			}
			continue
		}
		d := h.queue[0]
		h.queue = h.queue[1:]
		h.mu.Unlock()
		if s.deliver(h, d) {
			s.delivered.Add(1)
		} else {
			s.failed.Add(1)
		}
		if s.ctx.Err() != nil {
			return
		}
	}
}

// deliver posts d, retrying what may succeed later.
func (s *Sender) deliver(h *hook, d delivery) bool {
	retries := max(s.opts.Retries, 0)
	var last error
	for attempt := 0; attempt <= retries; attempt++ {
		if attempt > 0 {
			t := time.NewTimer(s.opts.Backoff << (attempt - 1))
			select {
			case <-t.C:
			case <-s.ctx.Done():
				t.Stop()
				return false
			}
		}
		retry, err := s.post(h, d)
		if err == nil {
			return true
		}
		last = err
		if !retry {
			break
		}
	}
	s.log.Warn("[EVOKORE] Webhook delivery failed", "id", d.id, "event", d.typ, "err", last)
	return false
}

func (s *Sender) post(h *hook, d delivery) (retry bool, err error) {
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, h.cfg.URL, bytes.NewReader(d.body))
	if err != nil {
		return false, err
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	n := nonce()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "evokore-webhooks")
	req.Header.Set(HeaderEvent, string(d.typ))
	req.Header.Set(HeaderDelivery, d.id)
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderNonce, n)
	if h.cfg.Secret != "" {
		req.Header.Set(HeaderSignature256, Sign(h.cfg.Secret, ts, n, d.body))
		req.Header.Set(HeaderSignature, SignLegacy(h.cfg.Secret, ts, d.body))
	}
	resp, err := s.client.Do(req)
	if err != nil {
		var be *netguard.BlockedError
		if errors.As(err, &be) {
			return false, be
		}
		// The URL may carry a secret in its query: report the error
		// without it.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return true, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return true, fmt.Errorf("receiver answered %d", resp.StatusCode)
	}
	return false, fmt.Errorf("receiver answered %d", resp.StatusCode)
}

func nonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Package httpsession serves the router over streamable HTTP: one of the
// router's two client transports, beside stdio (package stdio). The two
// never import each other; both reach the router only through
// ingress.Router, as the go-sdk's HTTP handler knows its servers only
// through getServer. This package owns HTTP's framing (POST bodies, plain
// JSON answers, event streams, the Mcp-* headers) and the sessions: one
// view per MCP session, its record kept in a session store so that
// another replica can resume it.
//
// Every request is read once and classified once (route), by its session
// (none, or the one it names, live here or resumed from the store), its
// era (Mcp-Protocol-Version) and its method, into one short handler per
// case:
//
//	no session, not a POST                      400, sessions start with a POST
//	DELETE of a session                         serveDelete: forgotten by the store, closed
//	GET of a session                            serveSDK: the session's event stream
//	notifications/cancelled of a carried call   serveCancel: the call is cancelled, 202
//	a request the byte path carries             serveCall: answered by the router, as bytes
//	  (a tools/call, a method the router serves)
//	a body stdio would refuse as a frame        refuse: 400 with the same JSON-RPC error
//	any other POST of a session                 serveSDK: the session's view
//	initialize (session era), no session        serveOpen: a new session's view
//	any other POST without a session            serveSessionless: a view for the request
//
// The byte path is one handler for both eras: a 2025-11-25 session's call
// and a 2026-07-28 request's are offered to ingress.Router.Take, the one
// rule for what it carries, once their HTTP framing is what the go-sdk
// would accept as it is (call.go).
package httpsession

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/era"
	"github.com/evokore/evokore/internal/httpfront"
	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/rawjson"
	"github.com/evokore/evokore/internal/sessionstore"
)

// Options configure a Handler.
type Options struct {
	// Identify says who a request acts for: its role and identity. A new
	// session takes them; a request for an existing session of another
	// tenant is answered as if the session did not exist, and one whose
	// explicit role differs from the session's is refused. nil gives
	// every session the router's role and no identity.
	Identify func(*http.Request) ingress.SessionOptions
	// Store keeps the sessions; nil is an in-process store with TTL.
	Store sessionstore.Store
	// TTL is how long an idle session lives; zero is forever.
	TTL time.Duration
	// Log receives what the handler reports; nil discards it.
	Log *slog.Logger
	// Refresh re-reads, on every request, the record of a session this
	// process serves: needed when replicas share the store, so that an
	// activation made through another replica is seen, and a session
	// deleted through another replica ends here too. Without it the
	// store is taken to be this process's alone: a session closed here
	// (idle, DELETE) is deleted from it.
	Refresh bool
	// SDK are the streamable handler's options; SessionTimeout defaults
	// to TTL.
	SDK *mcp.StreamableHTTPOptions
}

// Handler serves MCP over streamable HTTP (see New).
type Handler struct {
	rt        ingress.Router
	opts      Options
	store     sessionstore.Store
	sdk       *mcp.StreamableHTTPHandler
	stateless *mcp.StreamableHTTPHandler
	// events is the SDK handler's event store: the byte path's streams
	// and resumed sessions' are kept in it too, so a client resumes them
	// the SDK's way.
	events    mcp.EventStore
	saveEvery time.Duration
	log       *slog.Logger
	// maxBody bounds a POST's body (the SDK's MaxRequestBodyBytes);
	// negative is no bound.
	maxBody int64

	// posts counts the POSTs being served, so Shutdown can let their
	// answers be written before the sessions close.
	posts     atomic.Int64
	postsIdle chan struct{}
	postsMu   sync.Mutex

	mu       sync.Mutex
	live     map[string]*entry
	resuming sync.Mutex

	sweepOnce sync.Once
	stopOnce  sync.Once
	sweepStop chan struct{}
}

// New serves rt's sessions over streamable HTTP: one session view per MCP
// session, its record kept in the session store so that another process
// can resume it (sessions.go). It starts nothing.
func New(rt ingress.Router, o Options) *Handler {
	h := &Handler{rt: rt, opts: o, store: o.Store, live: map[string]*entry{}, log: o.Log}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.store == nil {
		h.store = sessionstore.NewMemory(o.TTL)
	}
	h.saveEvery = 30 * time.Second
	if o.TTL > 0 && o.TTL/10 < h.saveEvery {
		h.saveEvery = o.TTL / 10
	}
	sdk := mcp.StreamableHTTPOptions{}
	if o.SDK != nil {
		sdk = *o.SDK
	}
	// The SDK's idle timer counts only the POSTs it serves, and the byte
	// path serves most calls: idle sessions are the handler's to close
	// (idle.go).
	sdk.SessionTimeout = 0
	h.maxBody = sdk.MaxRequestBodyBytes
	if h.maxBody == 0 {
		h.maxBody = mcp.DefaultMaxRequestBodyBytes
	}
	if sdk.EventStore == nil {
		// A session's SSE streams can be resumed after a dropped
		// connection (Last-Event-ID), from this replica's memory.
		sdk.EventStore = mcp.NewMemoryEventStore(nil)
	}
	h.events = sdk.EventStore
	h.sdk = mcp.NewStreamableHTTPHandler(h.sessionServer(), &sdk)
	// Requests without a session that do not open one are served
	// statelessly, by a view built for the request: the SDK's stateless
	// handler is the one that speaks MCP 2026-07-28 (server/discover,
	// per-request capabilities, no Mcp-Session-Id).
	stateless := sdk
	stateless.Stateless = true
	stateless.SessionTimeout = 0
	stateless.EventStore = nil
	h.stateless = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if rt.Closing() {
			return nil
		}
		return rt.Sessionless(h.identify(r)).MCP()
	}, &stateless)
	h.sweepStop = make(chan struct{})
	rt.OnShutdown(h.flush)
	rt.OnShutdown(func(context.Context) { h.stopSweeping() })
	return h
}

// sessionServer is the SDK handler's getServer: the view of a session it
// opens. It also asks on the requests of the sessions it holds, only to
// read the protocol versions the server supports: one shared view answers
// those without building a session's.
func (h *Handler) sessionServer() func(*http.Request) *mcp.Server {
	var probe *mcp.Server
	var probeOnce sync.Once
	return func(r *http.Request) *mcp.Server {
		if h.rt.Closing() {
			return nil
		}
		if r.Header.Get(sessionHeader) != "" {
			probeOnce.Do(func() { probe = h.rt.Open(ingress.SessionOptions{}).MCP() })
			return probe
		}
		// The handler asks twice for one new session; build one view.
		slot, _ := r.Context().Value(newViewKey{}).(*newViewSlot)
		if slot != nil && slot.e != nil {
			return slot.e.v.MCP()
		}
		e := h.adopt(h.rt.Open(h.identify(r)), h.serveHeld)
		if slot != nil {
			slot.e = e
		}
		return e.v.MCP()
	}
}

type newViewKey struct{}
type newViewSlot struct{ e *entry }

const (
	sessionHeader = "Mcp-Session-Id"
	versionHeader = "Mcp-Protocol-Version"
)

// request is one HTTP request as ServeHTTP reads and classifies it.
type request struct {
	r *http.Request
	// body is a POST's body, read once: the header checks, the byte path
	// and the era all look at it, and the SDK reads it after.
	body []byte
	// sid is the session the request names ("" for none), and e that
	// session as this replica serves it.
	sid string
	e   *entry
	// version is the Mcp-Protocol-Version the request names.
	version string
	// who the request acts for.
	who ingress.SessionOptions
	// msg is the POST's message when it is one a byte path is offered
	// (scanned: a clean tools/call or notifications/cancelled).
	msg     ingress.Message
	scanned bool
	// call is the call the byte path carries, once route chose it.
	call ingress.Call
}

// ServeHTTP implements http.Handler: read the request, find the session
// it names, and hand it to the handler its case routes it to.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.rt.Closing() {
		httpfront.WriteRPCError(w, http.StatusServiceUnavailable, -32000, "evokore is shutting down", nil)
		return
	}
	if r.Method == http.MethodPost {
		h.postStarted()
		defer h.postDone()
	}
	q, ok := h.read(w, r)
	if !ok {
		return
	}
	if q.sid != "" {
		if q.e, ok = h.session(w, q); !ok {
			return
		}
		if sess := q.e.v.Session(); q.who.Inbound != "" && q.who.Identity == sess.Identity {
			// The client's latest token, for a child that trades it
			// (its earlier one may have expired).
			sess.SetInbound(q.who.Inbound)
		}
		if r.Method == http.MethodPost {
			q.e.postStarted()
			defer q.e.postDone()
		}
	}
	h.route(q)(w, q)
}

// read reads r once: who it acts for, its era and session, and a POST's
// body, bounded as the SDK bounds it (413 over the bound), with its Mcp-*
// headers checked against it (2026-07-28) and its message scanned.
func (h *Handler) read(w http.ResponseWriter, r *http.Request) (*request, bool) {
	q := &request{r: r, sid: r.Header.Get(sessionHeader), version: r.Header.Get(versionHeader), who: h.identify(r)}
	if r.Method != http.MethodPost {
		return q, true
	}
	if h.maxBody > 0 && r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, h.maxBody)
	}
	var err error
	if q.r, q.body, err = readWhole(r); err != nil {
		bodyUnreadable(w, err)
		return nil, false
	}
	if era.Sessionless(q.version) {
		var ok bool
		if q.r, ok = h.checkHeaders(w, q.r, q.body); !ok {
			return nil, false
		}
	}
	q.msg, q.scanned = ingress.Scan(q.body)
	return q, true
}

// handler serves one case of route.
type handler func(http.ResponseWriter, *request)

// route is the one place a request is classified (see the package doc):
// by its session, its method and its era, in that order.
func (h *Handler) route(q *request) handler {
	post := q.r.Method == http.MethodPost
	switch {
	case q.e == nil && !post:
		return needsPOST
	case q.e != nil && q.r.Method == http.MethodDelete:
		return h.serveDelete
	case q.e != nil && !post:
		return h.serveSDK
	case h.cancels(q):
		return serveCancel
	}
	if q.call = h.carried(q); q.call != nil {
		return h.serveCall
	}
	switch {
	case refusal(q.body) != nil:
		return refuse
	case q.e != nil:
		return h.serveSDK
	case opensSession(q):
		return h.serveOpen
	}
	return h.serveSessionless
}

// needsPOST answers a request that names no session and is no POST.
func needsPOST(w http.ResponseWriter, _ *request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = io.WriteString(w, `{"error":"New sessions must be initialized with a POST request"}`+"\n")
}

// serveDelete ends a session: the store forgets it, and its SDK side
// closes it.
func (h *Handler) serveDelete(w http.ResponseWriter, q *request) {
	h.delete(q.r.Context(), q.sid)
	q.e.sdk(w, q)
}

// serveSDK hands a session's request to its SDK side.
func (h *Handler) serveSDK(w http.ResponseWriter, q *request) { q.e.sdk(w, q) }

// serveHeld is the SDK side of a session the go-sdk's handler opened and
// holds.
func (h *Handler) serveHeld(w http.ResponseWriter, q *request) { h.sdk.ServeHTTP(w, q.r) }

// serveOpen opens a new session: the SDK's handler builds its view
// (sessionServer) and answers its initialize.
func (h *Handler) serveOpen(w http.ResponseWriter, q *request) {
	ctx := context.WithValue(q.r.Context(), newViewKey{}, &newViewSlot{})
	h.sdk.ServeHTTP(w, q.r.WithContext(ctx))
}

// serveSessionless serves a request without a session on a view built
// for it, by the SDK's stateless handler.
func (h *Handler) serveSessionless(w http.ResponseWriter, q *request) {
	h.stateless.ServeHTTP(w, q.r)
}

// refuse answers a POST body that the stdio transport would refuse as a
// frame, as it refuses it (see refusal), with 400 as the SDK's handler
// answers a body it cannot parse.
func refuse(w http.ResponseWriter, q *request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(refusal(q.body).Answer())
}

// refusal is why a POST body would be refused as a frame over stdio
// (ingress.Check: -32700 for what is not JSON or not UTF-8, -32600 for a
// bad envelope, the id echoed only when it is itself sound), or nil. The
// go-sdk carries ids through a float64 and takes the last of a repeated
// member: handed on, 1.9 would be answered as id 1 and 2^53+1 as 2^53,
// and the call would run. A batch, which the SDK still takes before
// 2025-06-18 and refuses from then on, has each element checked, the
// batch itself left to the SDK.
func refusal(body []byte) *ingress.Rejection {
	if !isBatch(body) || !json.Valid(body) || !utf8.Valid(body) {
		return ingress.Check(body)
	}
	var rej *ingress.Rejection
	_ = rawjson.Elements(body, func(v []byte) bool {
		rej = ingress.Check(v)
		return rej == nil
	})
	return rej
}

func isBatch(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// opensSession reports whether a POST without a session id opens one:
// it carries an initialize request of the session protocol (2025-11-25
// and before; under 2026-07-28 initialize no longer exists, and the
// stateless handler answers it as an unknown method).
func opensSession(q *request) bool {
	if era.Sessionless(q.version) {
		return false
	}
	type message struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	opens := func(m message) bool {
		v, _ := m.Params.Meta[mcp.MetaKeyProtocolVersion].(string)
		return m.Method == "initialize" && !era.Sessionless(v)
	}
	var one message
	if json.Unmarshal(q.body, &one) == nil {
		return opens(one)
	}
	var batch []message
	if json.Unmarshal(q.body, &batch) == nil {
		for _, m := range batch {
			if opens(m) {
				return true
			}
		}
	}
	return false
}

// readWhole reads r's whole body and returns r with it restored. The
// server closes the body it gave; closing it here would read on, past a
// bound that was hit, to drain it.
func readWhole(r *http.Request) (*http.Request, []byte, error) {
	if r.Body == nil {
		return r, nil, nil
	}
	body, err := io.ReadAll(r.Body)
	r2 := r.WithContext(r.Context()) // a shallow copy; the headers are the server's
	r2.Body = io.NopCloser(bytes.NewReader(body))
	return r2, body, err
}

// bodyUnreadable answers a POST whose body could not be read: 413 when
// it is over the bound, else 400.
func bodyUnreadable(w http.ResponseWriter, err error) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		http.Error(w, fmt.Sprintf("the request body is over %d bytes", tooBig.Limit), http.StatusRequestEntityTooLarge)
		return
	}
	http.Error(w, "cannot read the request body", http.StatusBadRequest)
}

func (h *Handler) identify(r *http.Request) ingress.SessionOptions {
	if h.opts.Identify == nil {
		return ingress.SessionOptions{}
	}
	return h.opts.Identify(r)
}

// roleRefused answers 403 when the request's identity names another role
// than the session's: a session keeps the role it started with.
func roleRefused(w http.ResponseWriter, who ingress.SessionOptions, role string) bool {
	if who.Role == "" || who.Role == role {
		return false
	}
	httpfront.WriteRPCError(w, http.StatusForbidden, -32001, "Forbidden",
		map[string]any{"detail": fmt.Sprintf("the session runs under role '%s'; start a new session for role '%s'", role, who.Role)})
	return true
}

func (h *Handler) postStarted() {
	h.postsMu.Lock()
	defer h.postsMu.Unlock()
	if h.posts.Add(1) == 1 {
		h.postsIdle = make(chan struct{})
	}
}

func (h *Handler) postDone() {
	h.postsMu.Lock()
	defer h.postsMu.Unlock()
	if h.posts.Add(-1) == 0 && h.postsIdle != nil {
		close(h.postsIdle)
		h.postsIdle = nil
	}
}

// flush waits, until ctx ends, for the POSTs being served to finish
// writing their answers.
func (h *Handler) flush(ctx context.Context) {
	for {
		h.postsMu.Lock()
		idle := h.postsIdle
		h.postsMu.Unlock()
		if idle == nil {
			return
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return
		}
	}
}

// Package httpsession serves the router's sessions over streamable HTTP:
// one session view per MCP session (the same views stdio gets), its
// record kept in a session store so that another replica can resume it.
// It knows the router only through Router, as the go-sdk's HTTP handler
// knows its servers through getServer, and keeps a session's record with
// a receiving middleware on that session's view.
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
	"github.com/evokore/evokore/internal/rawjson"
	"github.com/evokore/evokore/internal/server"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/sessionstore"
	"github.com/evokore/evokore/internal/stdio"
)

// Resuming sessions.
//
// The go-sdk's StreamableHTTPHandler keeps its sessions in a map of its
// own and answers a session id it does not hold with 404; v1.8.0 has no
// option to attach a transport under a chosen id (StreamableHTTPOptions
// holds no session store, and the handler's connect path is unexported).
// What it does have is ServerOptions.GetSessionID, asked once per new
// session, and every view is an mcp.Server of its own. So a session
// unknown to this process but held by the store is resumed in front of
// the handler: a view is built with the record's role, identity and
// activations and its GetSessionID pinned to the id, then an initialize
// (with the client's recorded initialize parameters) and the initialized
// notification are played through the handler on the client's behalf,
// which leaves the handler holding a ready session under the old id; the
// client's own request follows (the notification is not played when that
// request is the client's own initialized notification). Resumes are
// serialised, so two requests racing for one id resume it once.
//
// The store is the truth shared by replicas: a record is saved when the
// session is initialised, before the answer to a call that changed its
// activations leaves, and again at most every saveEvery while the session
// sends requests (which keeps it alive in the store). DELETE /mcp deletes
// it. A session idle for the session TTL is closed here by the handler
// and expires in the store on its own.

// Router is what the handler needs of the router.
type Router interface {
	// NewView builds the view of a new session acting as so; a non-empty
	// id is the session id it must keep (a resumed session).
	NewView(so server.SessionOptions, id string) *server.View
	// Start starts the router's background work, once.
	Start()
	// StartChildren boots the child servers, once.
	StartChildren(*mcp.ClientCapabilities)
	// StatelessView builds the view one sessionless request is served
	// by (MCP 2026-07-28).
	StatelessView(so server.SessionOptions) *server.View
	// InputSchema is the input schema clients are shown for the tool
	// they call by name, and whether a client without a session finds it
	// in tools/list; ok is false when no tool has that name, and schema
	// is nil for a child's tool that annotates no argument (no
	// Mcp-Param-* header to check).
	InputSchema(name string) (schema any, listed, ok bool)
	// TakeProxied and StatelessSession serve the fast path (fastcall.go):
	// a proxied tools/call answered before the SDK decodes it.
	TakeProxied(sess *session.Session, params []byte, meta server.MetaRule) (*server.ProxiedCall, bool)
	StatelessSession(so server.SessionOptions) *session.Session
	// Closing reports whether the router is shutting down.
	Closing() bool
	// OnShutdown registers what the router runs when it shuts down,
	// after the calls in flight ended and before the sessions close.
	OnShutdown(func(context.Context))
}

// Options configure a Handler.
type Options struct {
	// Identify says who a request acts for: its role and identity. A new
	// session takes them; a request for an existing session of another
	// tenant is answered as if the session did not exist, and one whose
	// explicit role differs from the session's is refused. nil gives
	// every session the server's role and no identity.
	Identify func(*http.Request) server.SessionOptions
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

// New serves rt's sessions over streamable HTTP: one session view per MCP
// session, its record kept in the session store so that another process
// can resume it (see above). It starts nothing.
func New(rt Router, o Options) *Handler {
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
	// The SDK's idle timer counts only the POSTs it serves, and the fast
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
	// The SDK also asks for a server on requests of existing sessions,
	// only to read the protocol versions it supports: one shared view
	// answers those without building a session's.
	var probe *mcp.Server
	var probeOnce sync.Once
	h.events = sdk.EventStore
	h.sdk = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if rt.Closing() {
			return nil
		}
		if e, ok := r.Context().Value(resumeKey{}).(*entry); ok {
			return e.v.MCP()
		}
		if r.Header.Get(sessionHeader) != "" {
			probeOnce.Do(func() { probe = rt.NewView(server.SessionOptions{}, "").MCP() })
			return probe
		}
		// The handler asks twice for one new session; build one view.
		slot, _ := r.Context().Value(newViewKey{}).(*newViewSlot)
		if slot != nil && slot.e != nil {
			return slot.e.v.MCP()
		}
		rt.Start()
		var so server.SessionOptions
		if o.Identify != nil {
			so = o.Identify(r)
		}
		e := h.adopt(rt.NewView(so, ""))
		if slot != nil {
			slot.e = e
		}
		return e.v.MCP()
	}, &sdk)
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
		rt.Start()
		// A client without a session declares no capabilities up front:
		// children boot without roots, sampling or elicitation for it.
		rt.StartChildren(nil)
		var so server.SessionOptions
		if o.Identify != nil {
			so = o.Identify(r)
		}
		return rt.StatelessView(so).MCP()
	}, &stateless)
	h.sweepStop = make(chan struct{})
	rt.OnShutdown(h.flush)
	rt.OnShutdown(func(context.Context) { h.stopSweeping() })
	return h
}

// opensSession reports whether a POST without a session id opens one:
// it carries an initialize request of the session protocol (2025-11-25
// and before; under 2026-07-28 initialize no longer exists, and the
// stateless handler answers it as an unknown method).
func opensSession(r *http.Request, body []byte) bool {
	if era.Sessionless(r.Header.Get("Mcp-Protocol-Version")) {
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
	if json.Unmarshal(body, &one) == nil {
		return opens(one)
	}
	var batch []message
	if json.Unmarshal(body, &batch) == nil {
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

// adopt makes v one of the handler's sessions: its record is saved by a
// receiving middleware on its view, and forgotten when it ends.
func (h *Handler) adopt(v *server.View) *entry {
	e := &entry{v: v}
	v.MCP().AddReceivingMiddleware(h.keep(e))
	v.OnEnd(func() { h.remove(e) })
	return e
}

// keep is the middleware that keeps a session's record: added to the
// session's view, outermost, so it sees each request's answer.
func (h *Handler) keep(e *entry) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			switch method {
			case "initialize":
				h.add(e)
				// Saved once the client's parameters are known and before
				// the answer leaves, so the session's next request finds
				// it on any replica.
				h.save(ctx, e)
				// Behind a round-robin proxy the session's initialized
				// notification may reach another replica: this one would
				// then never boot its children, and its calls would wait
				// for them. Over HTTP they boot once the initialize is
				// answered (and a resume replays one).
				var caps *mcp.ClientCapabilities
				if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p != nil {
					caps = p.Capabilities
				}
				h.rt.StartChildren(caps)
			case "tools/call":
				// Saved before the answer leaves, so that the session's
				// next request finds its activations on any replica.
				h.saveIfChanged(ctx, e)
			}
			return res, err
		}
	}
}

const sessionHeader = "Mcp-Session-Id"

// Record metadata keys.
const (
	metaTransport  = "transport"
	metaInitialize = "initialize"
	metaClient     = "client"
)

type resumeKey struct{}
type newViewKey struct{}
type newViewSlot struct{ e *entry }

// entry is one session the handler serves: its view and what it last
// saved, so that unchanged sessions are not written on every request.
type entry struct {
	v *server.View

	mu         sync.Mutex
	generation uint64
	at         time.Time
	// calls are the fast path's calls in flight, by raw id, for the
	// client's cancellation.
	calls map[string]context.CancelFunc
	// posts counts the session's POSTs being served; lastPost is when
	// the last one ended (see idle.go).
	posts    int
	lastPost time.Time
}

// Handler serves MCP over streamable HTTP (see New).
type Handler struct {
	rt        Router
	opts      Options
	store     sessionstore.Store
	sdk       *mcp.StreamableHTTPHandler
	stateless *mcp.StreamableHTTPHandler
	// events is the SDK handler's event store: the fast path's streams
	// are kept in it too, so a client resumes them the SDK's way.
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

// add registers a session once its id is known (its initialize).
func (h *Handler) add(e *entry) {
	h.mu.Lock()
	h.live[e.v.Session().ID] = e
	h.mu.Unlock()
	h.startSweeping()
}

// remove forgets a session that closed (idle, DELETE, shutdown). A
// store this process alone uses forgets it too, or records no one will
// ask for again would pile up; a shared store keeps it for the other
// replicas, and lets it expire.
func (h *Handler) remove(e *entry) {
	id := e.v.Session().ID
	h.mu.Lock()
	gone := h.live[id] == e
	if gone {
		delete(h.live, id)
	}
	h.mu.Unlock()
	if gone && !h.opts.Refresh && !h.rt.Closing() {
		h.delete(context.Background(), id)
	}
}

func (h *Handler) lookup(id string) *entry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.live[id]
}

func (h *Handler) identify(r *http.Request) server.SessionOptions {
	if h.opts.Identify == nil {
		return server.SessionOptions{}
	}
	return h.opts.Identify(r)
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.rt.Closing() {
		httpfront.WriteRPCError(w, http.StatusServiceUnavailable, -32000, "evokore is shutting down", nil)
		return
	}
	// A POST's body is read once, here: the headers' check, the fast
	// paths and the era all look at it, and the SDK reads it after.
	var body []byte
	if r.Method == http.MethodPost {
		h.postStarted()
		defer h.postDone()
		// Bounded as the SDK bounds them.
		if h.maxBody > 0 && r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, h.maxBody)
		}
		var err error
		if r, body, err = readWhole(r); err != nil {
			bodyUnreadable(w, err)
			return
		}
	}
	if r.Method == http.MethodPost && era.Sessionless(r.Header.Get("Mcp-Protocol-Version")) {
		var ok bool
		if r, ok = h.checkHeaders(w, r, body); !ok {
			return
		}
	}
	sid := r.Header.Get(sessionHeader)
	if sid == "" && r.Method != http.MethodPost {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"New sessions must be initialized with a POST request"}`+"\n")
		return
	}
	if sid == "" {
		if h.fastStateless(w, r, body) {
			return
		}
		if refuseMalformed(w, body) {
			return
		}
		if !opensSession(r, body) {
			h.stateless.ServeHTTP(w, r)
			return
		}
		ctx := context.WithValue(r.Context(), newViewKey{}, &newViewSlot{})
		h.sdk.ServeHTTP(w, r.WithContext(ctx))
		return
	}
	if !validSessionID(sid) {
		sessionNotFound(w, sid)
		return
	}
	who := h.identify(r)
	e := h.lookup(sid)
	if e != nil {
		sess := e.v.Session()
		if sess.Identity.Tenant != who.Identity.Tenant {
			sessionNotFound(w, sid)
			return
		}
		if h.opts.Refresh {
			rec, err := h.store.Load(r.Context(), sid)
			if errors.Is(err, sessionstore.ErrNotFound) {
				// Deleted or expired through another replica.
				e.v.Close()
				sessionNotFound(w, sid)
				return
			}
			if err != nil {
				// This process still holds the session: serve it from the
				// live view (activations as last seen); only the stages
				// that need shared state refuse while the store is down.
				h.log.Warn("[EVOKORE] Session store unavailable; serving the session from this replica", "session", sid, "err", err)
			} else if sess.SetActivations(rec.Activations) {
				e.mu.Lock()
				e.generation = sess.Generation()
				e.mu.Unlock()
			}
		}
	} else {
		rec, err := h.store.Load(r.Context(), sid)
		if errors.Is(err, sessionstore.ErrNotFound) || err == nil && rec.Tenant != who.Identity.Tenant {
			sessionNotFound(w, sid)
			return
		}
		if err != nil {
			h.storeUnavailable(w, err)
			return
		}
		if r.Method == http.MethodDelete {
			// Ended without being resumed, but by its own role only, as
			// on the router that serves it.
			if roleRefused(w, who, rec.Role) {
				return
			}
			h.delete(r.Context(), sid)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		var initialized bool
		r, initialized = peekInitialized(r)
		if e, err = h.resume(r, rec, initialized); err != nil {
			h.log.Warn("[EVOKORE] Could not resume an HTTP session", "session", sid, "err", err)
			httpfront.WriteRPCError(w, http.StatusServiceUnavailable, -32603, "Session could not be resumed", nil)
			return
		}
	}
	if roleRefused(w, who, e.v.Session().Role) {
		return
	}
	if r.Method == http.MethodDelete {
		h.delete(r.Context(), sid)
	} else {
		h.touch(r.Context(), e)
	}
	if r.Method == http.MethodPost {
		e.postStarted()
		defer e.postDone()
	}
	if r.Method == http.MethodPost && e.v.Session().Identity.Subject == who.Identity.Subject {
		// Another subject of the tenant is refused by the SDK, which
		// holds the session's user.
		if h.fastSession(w, r, body, e) {
			return
		}
	}
	if r.Method == http.MethodPost && refuseMalformed(w, body) {
		return
	}
	h.sdk.ServeHTTP(w, r)
}

// roleRefused answers 403 when the request's identity names another role
// than the session's: a session keeps the role it started with.
func roleRefused(w http.ResponseWriter, who server.SessionOptions, role string) bool {
	if who.Role == "" || who.Role == role {
		return false
	}
	httpfront.WriteRPCError(w, http.StatusForbidden, -32001, "Forbidden",
		map[string]any{"detail": fmt.Sprintf("the session runs under role '%s'; start a new session for role '%s'", role, who.Role)})
	return true
}

// refuseMalformed answers a POST body that the stdio transport would
// refuse as a frame, as it refuses it (stdio.Check: -32700 for what is
// not JSON or not UTF-8, -32600 for a bad envelope, the id echoed only
// when it is itself sound), with 400 as the SDK's handler answers a body
// it cannot parse. The go-sdk carries ids through a float64 and takes
// the last of a repeated member: handed on, 1.9 would be answered as id
// 1 and 2^53+1 as 2^53, and the call would run. Only bodies the fast
// path left come here (stdio.ScanRequest took nothing less than clean).
// A batch, which the SDK still takes before 2025-06-18 and refuses from
// then on, has each element checked, the batch itself left to the SDK.
func refuseMalformed(w http.ResponseWriter, body []byte) bool {
	var rej *stdio.Rejection
	if isBatch(body) && json.Valid(body) && utf8.Valid(body) {
		_ = rawjson.Elements(body, func(v []byte) bool {
			rej = stdio.Check(v)
			return rej == nil
		})
	} else {
		rej = stdio.Check(body)
	}
	if rej == nil {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(rej.Answer())
	return true
}

func isBatch(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// resume builds a view for a stored session and has the SDK handler
// adopt it under its id (see the package notes above).
func (h *Handler) resume(r *http.Request, rec sessionstore.Record, initialized bool) (*entry, error) {
	h.resuming.Lock()
	defer h.resuming.Unlock()
	if e := h.lookup(rec.ID); e != nil {
		return e, nil
	}
	var ip mcp.InitializeParams
	if raw := rec.Metadata[metaInitialize]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &ip); err != nil {
			return nil, fmt.Errorf("stored initialize parameters: %w", err)
		}
	}
	if ip.ProtocolVersion == "" {
		ip.ProtocolVersion = "2025-06-18"
	}
	if ip.Capabilities == nil {
		ip.Capabilities = &mcp.ClientCapabilities{}
	}
	if ip.ClientInfo == nil {
		ip.ClientInfo = &mcp.Implementation{Name: "resumed", Version: "0"}
	}
	h.rt.Start()
	e := h.adopt(h.rt.NewView(server.SessionOptions{Role: rec.Role, Identity: session.Identity{Subject: rec.Subject, Tenant: rec.Tenant}}, rec.ID))
	sess := e.v.Session()
	if !rec.Created.IsZero() {
		sess.Created = rec.Created
	}
	sess.SetActivations(rec.Activations)
	ctx := context.WithValue(r.Context(), resumeKey{}, e)

	params, err := json.Marshal(&ip)
	if err != nil {
		return nil, err
	}
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":"evokore-resume","method":"initialize","params":%s}`, params)
	if code, got := h.replay(ctx, r, "", init); code != http.StatusOK || got != rec.ID {
		return nil, fmt.Errorf("initialize answered %d for session %q", code, got)
	}
	// A client's initialized notification that lands on a replica
	// other than its initialize's is the request being resumed: played
	// here as well, the SDK would see it twice.
	if !initialized {
		if code, _ := h.replay(ctx, r, rec.ID, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
			return nil, fmt.Errorf("notifications/initialized answered %d", code)
		}
	}
	if h.lookup(rec.ID) != e {
		return nil, errors.New("the resumed session did not bind")
	}
	return e, nil
}

// peekLimit bounds what peekInitialized reads of a body: an initialized
// notification is far smaller.
const peekLimit = 4096

// peekInitialized reports whether r's body is the client's
// notifications/initialized, and returns a request whose body still
// reads in full.
func peekInitialized(r *http.Request) (*http.Request, bool) {
	if r.Method != http.MethodPost || r.Body == nil {
		return r, false
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, peekLimit+1))
	r2 := r.Clone(r.Context())
	r2.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if err != nil || len(head) > peekLimit {
		return r2, false
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(head, &msg) != nil {
		return r2, false
	}
	return r2, msg.ID == nil && msg.Method == "notifications/initialized"
}

// replay sends one JSON-RPC message through the SDK handler as the
// client's request r would, and returns the status and session id of
// the answer.
func (h *Handler) replay(ctx context.Context, r *http.Request, sid, body string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL.String(), bytes.NewBufferString(body))
	if err != nil {
		return 0, ""
	}
	req.Host, req.RemoteAddr = r.Host, r.RemoteAddr
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set(sessionHeader, sid)
	}
	rw := &discardWriter{header: http.Header{}}
	h.sdk.ServeHTTP(rw, req)
	if rw.code == 0 {
		rw.code = http.StatusOK
	}
	return rw.code, rw.header.Get(sessionHeader)
}

// discardWriter answers a replayed request into nothing.
type discardWriter struct {
	header http.Header
	code   int
}

func (d *discardWriter) Header() http.Header { return d.header }
func (d *discardWriter) Write(p []byte) (int, error) {
	if d.code == 0 {
		d.code = http.StatusOK
	}
	return len(p), nil
}
func (d *discardWriter) WriteHeader(code int) {
	if d.code == 0 {
		d.code = code
	}
}
func (d *discardWriter) Flush() {}

// record is the session as the store keeps it.
func record(v *server.View) sessionstore.Record {
	sess := v.Session()
	r := sessionstore.Record{
		ID: sess.ID, Role: sess.Role, Subject: sess.Identity.Subject, Tenant: sess.Identity.Tenant,
		Activations: sess.Activations(), Created: sess.Created, LastSeen: time.Now(),
		Metadata: map[string]string{metaTransport: "streamable-http"},
	}
	if ip := v.InitializeParams(); ip != nil {
		if raw, err := json.Marshal(ip); err == nil {
			r.Metadata[metaInitialize] = string(raw)
		}
		if ci := ip.ClientInfo; ci != nil {
			r.Metadata[metaClient] = ci.Name + " " + ci.Version
		}
	}
	return r
}

// save writes the session's record now.
func (h *Handler) save(ctx context.Context, e *entry) {
	sess := e.v.Session()
	if sess.ID == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	gen := sess.Generation()
	if err := h.store.Save(context.WithoutCancel(ctx), record(e.v)); err != nil {
		h.log.Warn("[EVOKORE] Could not save an HTTP session", "session", sess.ID, "err", err)
		return
	}
	e.generation, e.at = gen, time.Now()
}

// saveIfChanged saves the record when what the session lists changed
// since the last save.
func (h *Handler) saveIfChanged(ctx context.Context, e *entry) {
	e.mu.Lock()
	changed := e.generation != e.v.Session().Generation()
	e.mu.Unlock()
	if changed {
		h.save(ctx, e)
	}
}

// touch refreshes the record's expiry at most every saveEvery.
func (h *Handler) touch(ctx context.Context, e *entry) {
	e.mu.Lock()
	due := time.Since(e.at) >= h.saveEvery
	e.mu.Unlock()
	if due {
		h.save(ctx, e)
	} else {
		h.saveIfChanged(ctx, e)
	}
}

func (h *Handler) delete(ctx context.Context, id string) {
	if err := h.store.Delete(context.WithoutCancel(ctx), id); err != nil {
		h.log.Warn("[EVOKORE] Could not delete an HTTP session from the session store", "session", id, "err", err)
	}
}

func (h *Handler) storeUnavailable(w http.ResponseWriter, err error) {
	h.log.Warn("[EVOKORE] Session store unavailable", "err", err)
	httpfront.WriteRPCError(w, http.StatusServiceUnavailable, -32603, "Session store unavailable", nil)
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

// validSessionID accepts the ids this router hands out (and any other
// plain token a store may hold); anything else is unknown, so a hostile
// header never reaches a store as a path or a key pattern.
func validSessionID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// sessionNotFound is EVOKORE-MCP's answer for an unknown or expired
// session.
func sessionNotFound(w http.ResponseWriter, id string) {
	httpfront.WriteRPCError(w, http.StatusNotFound, -32001, "Session not found", map[string]any{"sessionId": id})
}

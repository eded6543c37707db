package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/httpfront"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/sessionstore"
)

// HTTP sessions.
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

// HTTPOptions configure HTTPSessions.
type HTTPOptions struct {
	// Identify says who a request acts for: its role and identity. A new
	// session takes them; a request for an existing session of another
	// tenant is answered as if the session did not exist, and one whose
	// explicit role differs from the session's is refused. nil gives
	// every session the server's role and no identity.
	Identify func(*http.Request) SessionOptions
	// Store keeps the sessions; nil is an in-process store with the
	// session TTL.
	Store sessionstore.Store
	// Refresh re-reads, on every request, the record of a session this
	// process serves: needed when replicas share the store, so that an
	// activation made through another replica is seen, and a session
	// deleted through another replica ends here too. Without it the
	// store is taken to be this process's alone: a session closed here
	// (idle, DELETE) is deleted from it.
	Refresh bool
	// SDK are the streamable handler's options; SessionTimeout defaults
	// to the session TTL.
	SDK *mcp.StreamableHTTPOptions
}

// HTTPHandler serves MCP over streamable HTTP with the default session
// options: one session view per MCP session, kept in an in-process store.
func (s *Server) HTTPHandler(identify func(*http.Request) SessionOptions, opts *mcp.StreamableHTTPOptions) http.Handler {
	return s.HTTPSessions(HTTPOptions{Identify: identify, SDK: opts})
}

// HTTPSessions serves MCP over streamable HTTP: one session view per MCP
// session, built by the same code Connect uses, its record kept in the
// session store so that another process can resume it (see above).
func (s *Server) HTTPSessions(o HTTPOptions) http.Handler {
	h := &httpSessions{srv: s, opts: o, store: o.Store, live: map[string]*view{}}
	if h.store == nil {
		h.store = sessionstore.NewMemory(s.opts.Settings.SessionTTL)
	}
	h.saveEvery = 30 * time.Second
	if ttl := s.opts.Settings.SessionTTL; ttl > 0 && ttl/10 < h.saveEvery {
		h.saveEvery = ttl / 10
	}
	sdk := mcp.StreamableHTTPOptions{}
	if o.SDK != nil {
		sdk = *o.SDK
	}
	if sdk.SessionTimeout == 0 {
		sdk.SessionTimeout = s.opts.Settings.SessionTTL
	}
	// The SDK also asks for a server on requests of existing sessions,
	// only to read the protocol versions it supports: one shared view
	// answers those without building a session's.
	probe := s.newView(SessionOptions{}).mcp
	h.sdk = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if s.isClosing() {
			return nil
		}
		if v, ok := r.Context().Value(resumeKey{}).(*view); ok {
			return v.mcp
		}
		if r.Header.Get(sessionHeader) != "" {
			return probe
		}
		// The handler asks twice for one new session; build one view.
		slot, _ := r.Context().Value(newViewKey{}).(*newViewSlot)
		if slot != nil && slot.v != nil {
			return slot.v.mcp
		}
		s.Start()
		var so SessionOptions
		if o.Identify != nil {
			so = o.Identify(r)
		}
		v := s.newView(so)
		v.http = h
		if slot != nil {
			slot.v = v
		}
		return v.mcp
	}, &sdk)
	s.flushers = append(s.flushers, h.flush)
	return h
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
type newViewSlot struct{ v *view }

// savedState is what a view last saved, so that unchanged sessions are
// not written on every request.
type savedState struct {
	mu         sync.Mutex
	generation uint64
	at         time.Time
}

type httpSessions struct {
	srv       *Server
	opts      HTTPOptions
	store     sessionstore.Store
	sdk       *mcp.StreamableHTTPHandler
	saveEvery time.Duration

	// posts counts the POSTs being served, so Shutdown can let their
	// answers be written before the sessions close.
	posts     atomic.Int64
	postsIdle chan struct{}
	postsMu   sync.Mutex

	mu       sync.Mutex
	live     map[string]*view
	resuming sync.Mutex
}

// add registers a view bound to its session; its record is saved when
// its initialize is answered.
func (h *httpSessions) add(v *view) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.live[v.sess.ID] = v
}

// remove forgets a view whose session closed (idle, DELETE, shutdown).
// A store this process alone uses forgets it too, or records no one
// will ask for again would pile up; a shared store keeps it for the other
// replicas, and lets it expire.
func (h *httpSessions) remove(v *view) {
	h.mu.Lock()
	gone := h.live[v.sess.ID] == v
	if gone {
		delete(h.live, v.sess.ID)
	}
	h.mu.Unlock()
	if gone && !h.opts.Refresh && !h.srv.isClosing() {
		h.delete(context.Background(), v.sess.ID)
	}
}

func (h *httpSessions) lookup(id string) *view {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.live[id]
}

func (h *httpSessions) identify(r *http.Request) SessionOptions {
	if h.opts.Identify == nil {
		return SessionOptions{}
	}
	return h.opts.Identify(r)
}

func (h *httpSessions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.srv.isClosing() {
		httpfront.WriteRPCError(w, http.StatusServiceUnavailable, -32000, "evokore is shutting down", nil)
		return
	}
	if r.Method == http.MethodPost {
		h.postStarted()
		defer h.postDone()
	}
	sid := r.Header.Get(sessionHeader)
	if sid == "" && r.Method != http.MethodPost {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"New sessions must be initialized with a POST request"}`+"\n")
		return
	}
	if sid == "" {
		ctx := context.WithValue(r.Context(), newViewKey{}, &newViewSlot{})
		h.sdk.ServeHTTP(w, r.WithContext(ctx))
		return
	}
	if !validSessionID(sid) {
		sessionNotFound(w, sid)
		return
	}
	who := h.identify(r)
	v := h.lookup(sid)
	if v != nil {
		if v.sess.Identity.Tenant != who.Identity.Tenant {
			sessionNotFound(w, sid)
			return
		}
		if h.opts.Refresh {
			rec, err := h.store.Load(r.Context(), sid)
			if errors.Is(err, sessionstore.ErrNotFound) {
				// Deleted or expired through another replica.
				v.close()
				sessionNotFound(w, sid)
				return
			}
			if err != nil {
				// This process still holds the session: serve it from the
				// live view (activations as last seen); only the stages
				// that need shared state refuse while the store is down.
				h.srv.log.Warn(fmt.Sprintf("[EVOKORE] Session store unavailable; serving session %s from this replica: %v", sid, err))
			} else if v.sess.SetActivations(rec.Activations) {
				v.saved.mu.Lock()
				v.saved.generation = v.sess.Generation()
				v.saved.mu.Unlock()
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
			h.delete(r.Context(), sid)
			w.WriteHeader(http.StatusNoContent)
			return
		}
		var initialized bool
		r, initialized = peekInitialized(r)
		if v, err = h.resume(r, rec, initialized); err != nil {
			h.srv.log.Warn(fmt.Sprintf("[EVOKORE] Could not resume HTTP session %s: %v", sid, err))
			httpfront.WriteRPCError(w, http.StatusServiceUnavailable, -32603, "Session could not be resumed", nil)
			return
		}
	}
	if who.Role != "" && who.Role != v.sess.Role {
		httpfront.WriteRPCError(w, http.StatusForbidden, -32001, "Forbidden",
			map[string]any{"detail": fmt.Sprintf("the session runs under role '%s'; start a new session for role '%s'", v.sess.Role, who.Role)})
		return
	}
	if r.Method == http.MethodDelete {
		h.delete(r.Context(), sid)
	} else {
		h.touch(r.Context(), v)
	}
	h.sdk.ServeHTTP(w, r)
}

// resume builds a view for a stored session and has the SDK handler
// adopt it under its id (see the package notes above).
func (h *httpSessions) resume(r *http.Request, rec sessionstore.Record, initialized bool) (*view, error) {
	h.resuming.Lock()
	defer h.resuming.Unlock()
	if v := h.lookup(rec.ID); v != nil {
		return v, nil
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
	h.srv.Start()
	v := h.srv.newView(SessionOptions{Role: rec.Role, Identity: session.Identity{Subject: rec.Subject, Tenant: rec.Tenant}})
	v.http = h
	v.pinnedID = rec.ID
	if !rec.Created.IsZero() {
		v.sess.Created = rec.Created
	}
	v.sess.SetActivations(rec.Activations)
	ctx := context.WithValue(r.Context(), resumeKey{}, v)

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
	if h.lookup(rec.ID) != v {
		return nil, errors.New("the resumed session did not bind")
	}
	return v, nil
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
func (h *httpSessions) replay(ctx context.Context, r *http.Request, sid, body string) (int, string) {
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

// record is the view's session as the store keeps it.
func (h *httpSessions) record(v *view) sessionstore.Record {
	r := sessionstore.Record{
		ID: v.sess.ID, Role: v.sess.Role, Subject: v.sess.Identity.Subject, Tenant: v.sess.Identity.Tenant,
		Activations: v.sess.Activations(), Created: v.sess.Created, LastSeen: time.Now(),
		Metadata: map[string]string{metaTransport: "streamable-http"},
	}
	if v.ss != nil {
		if ip := v.ss.InitializeParams(); ip != nil {
			if raw, err := json.Marshal(ip); err == nil {
				r.Metadata[metaInitialize] = string(raw)
			}
			if ci := ip.ClientInfo; ci != nil {
				r.Metadata[metaClient] = ci.Name + " " + ci.Version
			}
		}
	}
	return r
}

// save writes the view's record now.
func (h *httpSessions) save(ctx context.Context, v *view) {
	if v.sess.ID == "" {
		return
	}
	v.saved.mu.Lock()
	defer v.saved.mu.Unlock()
	gen := v.sess.Generation()
	if err := h.store.Save(context.WithoutCancel(ctx), h.record(v)); err != nil {
		h.srv.log.Warn(fmt.Sprintf("[EVOKORE] Could not save HTTP session %s: %v", v.sess.ID, err))
		return
	}
	v.saved.generation, v.saved.at = gen, time.Now()
}

// saveIfChanged saves the record when what the session lists changed
// since the last save.
func (h *httpSessions) saveIfChanged(ctx context.Context, v *view) {
	v.saved.mu.Lock()
	changed := v.saved.generation != v.sess.Generation()
	v.saved.mu.Unlock()
	if changed {
		h.save(ctx, v)
	}
}

// touch refreshes the record's expiry at most every saveEvery.
func (h *httpSessions) touch(ctx context.Context, v *view) {
	v.saved.mu.Lock()
	due := time.Since(v.saved.at) >= h.saveEvery
	v.saved.mu.Unlock()
	if due {
		h.save(ctx, v)
	} else {
		h.saveIfChanged(ctx, v)
	}
}

func (h *httpSessions) delete(ctx context.Context, id string) {
	if err := h.store.Delete(context.WithoutCancel(ctx), id); err != nil {
		h.srv.log.Warn(fmt.Sprintf("[EVOKORE] Could not delete HTTP session %s from the session store: %v", id, err))
	}
}

func (h *httpSessions) storeUnavailable(w http.ResponseWriter, err error) {
	h.srv.log.Warn(fmt.Sprintf("[EVOKORE] Session store unavailable: %v", err))
	httpfront.WriteRPCError(w, http.StatusServiceUnavailable, -32603, "Session store unavailable", nil)
}

func (h *httpSessions) postStarted() {
	h.postsMu.Lock()
	defer h.postsMu.Unlock()
	if h.posts.Add(1) == 1 {
		h.postsIdle = make(chan struct{})
	}
}

func (h *httpSessions) postDone() {
	h.postsMu.Lock()
	defer h.postsMu.Unlock()
	if h.posts.Add(-1) == 0 && h.postsIdle != nil {
		close(h.postsIdle)
		h.postsIdle = nil
	}
}

// flush waits, until ctx ends, for the POSTs being served to finish
// writing their answers.
func (h *httpSessions) flush(ctx context.Context) {
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

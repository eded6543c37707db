package httpsession

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/httpfront"
	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/sessionstore"
)

// Sessions and the store.
//
// The store is the truth shared by replicas: a record is saved when the
// session is initialised, before the answer to a call that changed its
// activations leaves, and again at most every saveEvery while the session
// sends requests (which keeps it alive in the store). DELETE /mcp deletes
// it. A session idle for the session TTL is closed here by the handler
// and expires in the store on its own.
//
// A record holds the router's part of the session (role, identity,
// activations, creation) and the SDK's (ServerSessionState: the client's
// initialize, whether it sent its initialized notification, the
// negotiated version, the log level), which the view's middleware sees
// pass. A session unknown to this replica but held by the store is
// resumed from that state, nothing played to it: its view is connected to
// a streamable transport of its own with the saved state
// (mcp.ServerSessionOptions), and its requests are served there
// (resumed.go). The go-sdk's StreamableHTTPHandler keeps the sessions it
// opened in a map of its own, with no way in v1.8.0 to hand it one, so
// the sessions a replica opened are the handler's and the ones it
// resumed are its own. Resumes are serialised, so two requests racing
// for one id resume it once.

// Record metadata keys.
const (
	metaTransport  = "transport"
	metaInitialize = "initialize"
	metaState      = "state"
	metaClient     = "client"
)

// entry is one session the handler serves: its view, how its SDK side is
// served, and what it last saved, so that unchanged sessions are not
// written on every request.
type entry struct {
	v ingress.View
	// sdk serves the session's SDK path: the go-sdk's handler for a
	// session it opened, the session's own transport for one resumed.
	sdk handler

	mu         sync.Mutex
	generation uint64
	at         time.Time
	// state is the SDK's part of the session, as its middleware saw it
	// (InitializeParams aside, which the session holds).
	state mcp.ServerSessionState
	// calls are the byte path's calls in flight, for the client's
	// cancellation.
	calls ingress.Inflight
	// posts counts the session's POSTs being served; lastPost is when
	// the last one ended (see idle.go).
	posts    int
	lastPost time.Time
}

// adopt makes v one of the handler's sessions, its SDK path served by
// sdk: its record is saved by a receiving middleware on its view, and
// forgotten when it ends.
func (h *Handler) adopt(v ingress.View, sdk handler) *entry {
	e := &entry{v: v, sdk: sdk}
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
				h.initialized(ctx, e, req, res)
			case "notifications/initialized", "logging/setLevel":
				// The SDK's part of the session changed: saved before the
				// answer leaves, as the session's next request may be
				// resumed elsewhere from it.
				e.stateChanged(req)
				h.save(ctx, e)
			case "tools/call":
				// Saved before the answer leaves, so that the session's
				// next request finds its activations on any replica.
				h.saveIfChanged(ctx, e)
			}
			return res, err
		}
	}
}

// stateChanged records what req, an initialized notification or a log
// level, changed of the SDK's part of the session.
func (e *entry) stateChanged(req mcp.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch p := req.GetParams().(type) {
	case *mcp.InitializedParams:
		e.state.InitializedParams = &mcp.InitializedParams{}
	case *mcp.SetLoggingLevelParams: //lint:ignore SA1019 a session's log level is part of the state it is resumed from
		if p != nil {
			e.state.LogLevel = p.Level
		}
	}
}

// initialized registers a session whose initialize was answered, saves it
// and boots the children.
func (h *Handler) initialized(ctx context.Context, e *entry, req mcp.Request, res mcp.Result) {
	var caps *mcp.ClientCapabilities
	if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p != nil {
		caps = p.Capabilities
	}
	if r, ok := res.(*mcp.InitializeResult); ok {
		e.mu.Lock()
		e.state.NegotiatedProtocolVersion = r.ProtocolVersion
		e.mu.Unlock()
	}
	h.add(e)
	// Saved once the client's parameters are known and before the answer
	// leaves, so the session's next request finds it on any replica.
	h.save(ctx, e)
	// Behind a round-robin proxy the session's initialized notification
	// may reach another replica: this one would then never boot its
	// children, and its calls would wait for them. Over HTTP they boot
	// once the initialize is answered.
	h.rt.StartChildren(caps)
}

// session finds the session q names: live here (its record re-read when
// replicas share the store), or held by the store and resumed here. It
// answers the request itself and reports false when the session is
// unknown to q's tenant (404), the store cannot be read (503), the role
// differs (403), or the request is the DELETE of a session not resumed
// (204).
func (h *Handler) session(w http.ResponseWriter, q *request) (*entry, bool) {
	if !validSessionID(q.sid) {
		sessionNotFound(w, q.sid)
		return nil, false
	}
	e, ok := h.liveSession(w, q)
	if ok && e == nil {
		e, ok = h.storedSession(w, q)
	}
	if !ok || roleRefused(w, q.who, e.v.Session().Role) {
		return nil, false
	}
	if q.r.Method != http.MethodDelete {
		h.touch(q.r.Context(), e)
	}
	return e, true
}

// liveSession is the session q names when this replica serves it, nil when it
// does not; false when it answered the request (another tenant's session,
// or one deleted through another replica).
func (h *Handler) liveSession(w http.ResponseWriter, q *request) (*entry, bool) {
	e := h.lookup(q.sid)
	if e == nil {
		return nil, true
	}
	sess := e.v.Session()
	if sess.Identity.Tenant != q.who.Identity.Tenant {
		sessionNotFound(w, q.sid)
		return nil, false
	}
	if !h.opts.Refresh {
		return e, true
	}
	rec, err := h.store.Load(q.r.Context(), q.sid)
	switch {
	case errors.Is(err, sessionstore.ErrNotFound):
		// Deleted or expired through another replica.
		e.v.Close()
		sessionNotFound(w, q.sid)
		return nil, false
	case err != nil:
		// This process still holds the session: serve it from the live
		// view (activations as last seen); only the stages that need
		// shared state refuse while the store is down.
		h.log.Warn("[EVOKORE] Session store unavailable; serving the session from this replica", "session", q.sid, "err", err)
	case sess.SetActivations(rec.Activations):
		e.mu.Lock()
		e.generation = sess.Generation()
		e.mu.Unlock()
	}
	return e, true
}

// storedSession resumes the session q names from the store; false when it
// answered the request instead.
func (h *Handler) storedSession(w http.ResponseWriter, q *request) (*entry, bool) {
	rec, err := h.store.Load(q.r.Context(), q.sid)
	if errors.Is(err, sessionstore.ErrNotFound) || err == nil && rec.Tenant != q.who.Identity.Tenant {
		sessionNotFound(w, q.sid)
		return nil, false
	}
	if err != nil {
		h.storeUnavailable(w, err)
		return nil, false
	}
	if q.r.Method == http.MethodDelete {
		// Ended without being resumed, but by its own role only, as on
		// the router that serves it.
		if !roleRefused(w, q.who, rec.Role) {
			h.delete(q.r.Context(), q.sid)
			w.WriteHeader(http.StatusNoContent)
		}
		return nil, false
	}
	e, err := h.resume(q, rec)
	if err != nil {
		h.log.Warn("[EVOKORE] Could not resume an HTTP session", "session", q.sid, "err", err)
		httpfront.WriteRPCError(w, http.StatusServiceUnavailable, -32603, "Session could not be resumed", nil)
		return nil, false
	}
	return e, true
}

// resume serves a stored session here from its saved state (see the notes
// above).
func (h *Handler) resume(q *request, rec sessionstore.Record) (*entry, error) {
	h.resuming.Lock()
	defer h.resuming.Unlock()
	if e := h.lookup(rec.ID); e != nil {
		return e, nil
	}
	state, err := savedState(rec, q)
	if err != nil {
		return nil, err
	}
	v := h.rt.Open(ingress.SessionOptions{Role: rec.Role, Identity: session.Identity{Subject: rec.Subject, Tenant: rec.Tenant}})
	sess := v.Session()
	if !rec.Created.IsZero() {
		sess.Created = rec.Created
	}
	sess.SetActivations(rec.Activations)
	t := &mcp.StreamableServerTransport{SessionID: rec.ID, EventStore: h.events}
	e := h.adopt(v, resumed{t: t, v: v}.serve)
	e.state = *state
	e.state.InitializeParams = nil
	if _, err := v.Connect(q.r.Context(), t, state); err != nil {
		return nil, err
	}
	h.add(e)
	return e, nil
}

// savedState is the SDK's part of a stored session. A record saved before
// the client's initialized notification reached any replica holds none;
// the session then counts as initialised unless the request being resumed
// is that notification (played twice, the SDK would refuse it).
func savedState(rec sessionstore.Record, q *request) (*mcp.ServerSessionState, error) {
	var state mcp.ServerSessionState
	if raw := rec.Metadata[metaState]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &state); err != nil {
			return nil, fmt.Errorf("stored session state: %w", err)
		}
	}
	raw := rec.Metadata[metaInitialize]
	if raw == "" {
		return nil, errors.New("the stored session holds no initialize parameters")
	}
	if err := json.Unmarshal([]byte(raw), &state.InitializeParams); err != nil || state.InitializeParams == nil {
		return nil, fmt.Errorf("stored initialize parameters: %v", err)
	}
	if state.NegotiatedProtocolVersion == "" {
		state.NegotiatedProtocolVersion = state.InitializeParams.ProtocolVersion
	}
	if state.InitializedParams == nil && !isInitializedNotification(q.body) {
		state.InitializedParams = &mcp.InitializedParams{}
	}
	return &state, nil
}

// isInitializedNotification reports whether body is the client's
// notifications/initialized.
func isInitializedNotification(body []byte) bool {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(body, &msg) == nil && msg.ID == nil && msg.Method == "notifications/initialized"
}

// add registers a session once its id is known.
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

// record is the session as the store keeps it.
func (e *entry) record() sessionstore.Record {
	sess := e.v.Session()
	r := sessionstore.Record{
		ID: sess.ID, Role: sess.Role, Subject: sess.Identity.Subject, Tenant: sess.Identity.Tenant,
		Activations: sess.Activations(), Created: sess.Created, LastSeen: time.Now(),
		Metadata: map[string]string{metaTransport: "streamable-http"},
	}
	if ip := e.v.InitializeParams(); ip != nil {
		if raw, err := json.Marshal(ip); err == nil {
			r.Metadata[metaInitialize] = string(raw)
		}
		if ci := ip.ClientInfo; ci != nil {
			r.Metadata[metaClient] = ci.Name + " " + ci.Version
		}
	}
	if raw, err := json.Marshal(e.state); err == nil {
		r.Metadata[metaState] = string(raw)
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
	if err := h.store.Save(context.WithoutCancel(ctx), e.record()); err != nil {
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

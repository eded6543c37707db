package httpsession

import (
	"context"
	"crypto/rand"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/era"
	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/rawjson"
	"github.com/evokore/evokore/internal/tracing"
)

// The byte path over HTTP.
//
// A POST carrying one tools/call that the router takes (ingress.Router.
// Take, the one rule) is answered here, before the go-sdk's handler
// decodes it: the call runs through the router like every call, with the
// client's argument bytes, and the child's result bytes go back as a
// plain application/json response, or, to a 2025-11-25 session, as a
// resumable stream of two events (both eras allow either; the client
// accepts both). The SDK decodes each message with a fresh JSON decoder
// of tens of KiB, and a 2026-07-28 request builds a whole MCP server for
// itself; profiled, that was most of the 1.8 ms of CPU a call over HTTP
// cost (docs/performance.md).
//
// A POST is offered to the rule only when its HTTP framing is what the
// SDK would accept as it is (Content-Type and Accept; the protocol
// version header agreeing with the session, or with the request's _meta;
// Mcp-Method and Mcp-Name naming this call, the Mcp-Param-* headers being
// checked before, params.go). A POST answered here has no stream for
// progress, so the call is delivered without it (ingress.Via): a call
// asking for progress, or anything else the rule leaves, goes to the SDK,
// which answers every case the way it always did.

// carried is the call the byte path carries for q, or nil: registered
// with q's session, for its cancellation, when it has one.
func (h *Handler) carried(q *request) ingress.Call {
	if !q.scanned || q.msg.Method != ingress.MethodCall || !plainPOST(q.r) {
		return nil
	}
	if q.e == nil {
		return h.sessionlessCall(q)
	}
	ip := q.e.v.InitializeParams()
	if ip == nil || q.version != ip.ProtocolVersion || era.Sessionless(ip.ProtocolVersion) ||
		q.e.v.Session().Identity.Subject != q.who.Identity.Subject {
		// Another subject of the tenant goes to the SDK, which holds the
		// session's user.
		return nil
	}
	c, ok := h.rt.Take(q.e.v, q.msg, ingress.Via{})
	if !ok {
		return nil
	}
	return c
}

// sessionlessCall is the call of a 2026-07-28 POST without a session that
// the byte path carries, or nil.
func (h *Handler) sessionlessCall(q *request) ingress.Call {
	if !era.Served(q.version) || q.r.Header.Get("Mcp-Method") != ingress.MethodCall {
		return nil
	}
	meta := rawjson.Member(q.msg.Params, "_meta")
	if v, ok := rawjson.String(rawjson.Member(meta, mcp.MetaKeyProtocolVersion)); !ok || v != q.version {
		return nil
	}
	if name, ok := rawjson.String(rawjson.Member(q.msg.Params, "name")); !ok || q.r.Header.Get("Mcp-Name") != name {
		return nil
	}
	c, ok := h.rt.Take(h.rt.Sessionless(q.who), q.msg, ingress.Via{Sessionless: true})
	if !ok {
		return nil
	}
	return c
}

// cancels reports whether q is the notifications/cancelled of a call the
// byte path runs in q's session.
func (h *Handler) cancels(q *request) bool {
	if q.e == nil || !q.scanned || q.msg.Method != ingress.MethodCancel || !plainPOST(q.r) {
		return false
	}
	ip := q.e.v.InitializeParams()
	return ip != nil && q.version == ip.ProtocolVersion && q.e.calls.Running(q.msg)
}

// serveCancel cancels the call q names and answers 202, as the SDK
// answers a notification.
func serveCancel(w http.ResponseWriter, q *request) {
	q.e.calls.Cancel(q.msg)
	w.WriteHeader(http.StatusAccepted)
}

// serveCall runs the call the byte path carries for q and answers it.
func (h *Handler) serveCall(w http.ResponseWriter, q *request) {
	ctx := tracing.FromHeader(q.r.Context(), q.r.Header)
	if q.e == nil {
		res, raw, err := q.call.Run(ctx)
		ingress.Answer(&replier{w: w, sessionless: true}, q.msg.ID, res, raw, err)
		return
	}
	// The call outlives its connection: a client whose connection drops
	// resumes the stream for its answer. notifications/cancelled
	// (serveCancel) and the router's shutdown still end it.
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	if !q.e.calls.Begin(q.msg.ID, cancel) {
		// A reused id: the SDK answers it as it always did.
		h.serveSDK(w, q)
		return
	}
	defer q.e.calls.End(q.msg.ID)
	rep := &replier{w: w}
	if era.PrimesStreams(q.version) && h.events != nil {
		// 2025-11-25 clients expect a resumable stream (SEP-1699): a
		// priming event first, then the answer, both kept in the SDK's
		// event store under a stream of their own, so a client whose
		// connection drops mid-call resumes it with Last-Event-ID once
		// the answer is stored (a resume before then gets the priming
		// event only, and asks again).
		rep.stream = h.openStream(q.r.Context(), w, q.sid)
	}
	res, raw, err := q.call.Run(ctx)
	ingress.Answer(rep, q.msg.ID, res, raw, err)
	h.saveIfChanged(q.r.Context(), q.e)
}

// plainPOST reports whether r is a POST the SDK would accept as it is:
// a JSON body, and a client that accepts both response types.
func plainPOST(r *http.Request) bool {
	json, stream := accepts(r)
	return plainContent(r) && json && stream
}

// plainContent reports whether r's body is JSON.
func plainContent(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// accepts reports whether r's client accepts a JSON answer and an event
// stream.
func accepts(r *http.Request) (json, stream bool) {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part))
			switch mt {
			case "application/json":
				json = true
			case "text/event-stream":
				stream = true
			case "*/*":
				json, stream = true, true
			}
		}
	}
	return json, stream
}

// openStream starts a POST's event stream: headers, and the priming
// event, stored. A store that fails leaves nil: the answer goes as JSON.
func (h *Handler) openStream(ctx context.Context, w http.ResponseWriter, sid string) *sseStream {
	st := &sseStream{ctx: ctx, events: h.events, sid: sid, id: rand.Text()}
	if h.events.Open(ctx, sid, st.id) != nil || h.events.Append(ctx, sid, st.id, nil) != nil {
		return nil
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache, no-transform")
	w.WriteHeader(http.StatusOK)
	_ = st.write(w, "prime", nil)
	return st
}

// sseStream is one byte-path POST answered as events.
type sseStream struct {
	ctx    context.Context
	events mcp.EventStore
	sid    string
	id     string
	next   int
}

// write sends one event, numbered as the SDK numbers a stream's events
// ("<stream>_<index>", the index counting from 0, the priming event's).
func (st *sseStream) write(w http.ResponseWriter, name string, data []byte) error {
	buf := make([]byte, 0, len(data)+len(st.id)+48)
	buf = append(buf, "event: "...)
	buf = append(buf, name...)
	buf = append(buf, "\nid: "...)
	buf = append(buf, st.id...)
	buf = append(buf, '_')
	buf = strconv.AppendInt(buf, int64(st.next), 10)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	st.next++
	_, err := w.Write(buf)
	_ = http.NewResponseController(w).Flush()
	return err
}

// replier writes one JSON-RPC response as the HTTP response
// (ingress.Replier): plain JSON, or the message event of a stream already
// open.
type replier struct {
	w      http.ResponseWriter
	stream *sseStream
	// sessionless marks a 2026-07-28 request, whose protocol errors carry
	// an HTTP status of their own (errorStatus).
	sessionless bool
}

func (p *replier) Reply(id, result []byte) error {
	return p.write(ingress.Response(id, result), http.StatusOK)
}

func (p *replier) ReplyError(id []byte, code int64, message string, data []byte) error {
	status := http.StatusOK
	if p.sessionless {
		status = errorStatus(code)
	}
	return p.write(ingress.ErrorResponse(id, code, message, data), status)
}

// errorStatus is the HTTP status MCP 2026-07-28 gives a JSON-RPC error
// (SEP-2575), as the go-sdk's handler sends it for the requests it
// answers: 404 for a method not found, 400 for invalid params, an
// unsupported protocol version or a missing client capability (a
// child's -32021 passed on included), 200 otherwise.
func errorStatus(code int64) int {
	switch code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

func (p *replier) write(line []byte, status int) error {
	if st := p.stream; st != nil {
		// Stored before it is sent: a client that misses it finds it.
		_ = st.events.Append(st.ctx, st.sid, st.id, line)
		return st.write(p.w, "message", line)
	}
	p.w.Header().Set("Content-Type", "application/json")
	p.w.WriteHeader(status)
	_, err := p.w.Write(line)
	return err
}

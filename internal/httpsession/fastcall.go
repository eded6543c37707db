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
	"github.com/evokore/evokore/internal/rawjson"
	"github.com/evokore/evokore/internal/stdio"
	"github.com/evokore/evokore/internal/tracing"
)

// The fast path over HTTP.
//
// A POST carrying one proxied tools/call is answered here, before the
// go-sdk's handler decodes it: the call runs through the router like
// every call, with the client's argument bytes, and the child's result
// bytes go back as a plain application/json response (both eras allow
// it; the client accepts both). The SDK decodes each message with a
// fresh JSON decoder of tens of KiB, and a 2026-07-28 request builds a
// whole MCP server for itself; profiled, that was most of the 1.8 ms of
// CPU a call over HTTP cost (docs/performance.md).
//
// A request is taken only when everything the SDK would check holds in
// the plainest way (Content-Type, Accept, protocol version header and
// _meta agree, Mcp-Method and Mcp-Name name this call, no Mcp-Param-*
// header and a tool that declares none) and the call needs no stream: a
// progress token, a retried input_required call or any _meta the path
// does not know leaves the request, unread, to the SDK, which answers
// every case the way it always did.

// sessionMeta and statelessMeta are the _meta members a taken call may
// carry: the trace context, and for a sessionless request its
// per-request protocol, capabilities and client.
func sessionMeta(k string) bool { return k == "traceparent" || k == "tracestate" }

func statelessMeta(k string) bool {
	switch k {
	case mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities, mcp.MetaKeyClientInfo:
		return true
	}
	return sessionMeta(k)
}

// plainPOST reports whether r is a POST the SDK would accept as it is:
// a JSON body, and a client that accepts both response types.
func plainPOST(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return false
	}
	json, stream := false, false
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
	return json && stream
}

// fastSession answers body, a POST of the live session e, when it is a
// proxied tools/call, or the cancellation of one this path runs; false
// leaves it to the SDK.
func (h *Handler) fastSession(w http.ResponseWriter, r *http.Request, body []byte, e *entry) bool {
	ip := e.v.InitializeParams()
	if ip == nil || !plainPOST(r) || r.Header.Get("Mcp-Protocol-Version") != ip.ProtocolVersion || era.Sessionless(ip.ProtocolVersion) {
		return false
	}
	m, ok := stdio.ScanRequest(body)
	if !ok {
		return false
	}
	if m.Method == "notifications/cancelled" {
		return e.cancel(w, m)
	}
	p, ok := h.rt.TakeProxied(e.v.Session(), m.Params, sessionMeta)
	if !ok {
		return false
	}
	key := string(m.ID)
	// The call outlives its connection: a client whose connection drops
	// resumes the stream for its answer. notifications/cancelled (e.cancel)
	// and the router's shutdown still end it.
	ctx, cancel := context.WithCancel(context.WithoutCancel(tracing.FromHeader(r.Context(), r.Header)))
	defer cancel()
	if !e.begin(key, cancel) {
		return false // the SDK answers a reused id as it always did
	}
	defer e.end(key)
	rep := &replier{w: w}
	if ip.ProtocolVersion >= primingEra && h.events != nil {
		// 2025-11-25 clients expect a resumable stream (SEP-1699): a
		// priming event first, then the answer, both kept in the SDK's
		// event store under a stream of their own, so a client whose
		// connection drops mid-call resumes it with Last-Event-ID once
		// the answer is stored (a resume before then gets the priming
		// event only, and asks again).
		rep.stream = h.openStream(r.Context(), w, e.v.Session().ID)
	}
	res, raw, err := p.Run(ctx)
	answer(rep, m.ID, res, raw, err)
	h.saveIfChanged(r.Context(), e)
	return true
}

// primingEra is the first protocol version whose POST streams begin with
// a priming event.
const primingEra = "2025-11-25"

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

// sseStream is one fast-path POST answered as events.
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

// fastStateless answers body, a POST without a session, when it is a
// 2026-07-28 tools/call of a proxied tool; false leaves it to the SDK.
func (h *Handler) fastStateless(w http.ResponseWriter, r *http.Request, body []byte) bool {
	version := r.Header.Get("Mcp-Protocol-Version")
	if version != era.SessionlessVersion || !plainPOST(r) || r.Header.Get("Mcp-Method") != "tools/call" {
		return false
	}
	for k := range r.Header {
		if strings.HasPrefix(k, "Mcp-Param-") {
			return false
		}
	}
	m, ok := stdio.ScanRequest(body)
	if !ok || m.Method != "tools/call" {
		return false
	}
	meta := rawjson.Member(m.Params, "_meta")
	if v, ok := rawjson.String(rawjson.Member(meta, mcp.MetaKeyProtocolVersion)); !ok || v != version {
		return false
	}
	if h.rt.Closing() {
		return false
	}
	h.rt.Start()
	h.rt.StartChildren(nil)
	p, ok := h.rt.TakeProxied(h.rt.StatelessSession(h.identify(r)), m.Params, statelessMeta)
	if !ok || p.ParamHeaders() || r.Header.Get("Mcp-Name") != p.Name() {
		return false
	}
	res, raw, err := p.Run(tracing.FromHeader(r.Context(), r.Header))
	answer(&replier{w: w, sessionless: true}, m.ID, res, raw, err)
	return true
}

// answer writes a call's JSON-RPC response as application/json: the
// child's result bytes when raw is set, else res or err. To a sessionless
// request a result says its resultType (package era), the child's bytes
// too when the child did not say.
func answer(rep *replier, id []byte, res *mcp.CallToolResult, raw []byte, err error) {
	if err == nil && raw == nil {
		data, merr := era.ResultBytes(res, rep.sessionless)
		if merr != nil {
			err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "cannot encode the result: " + merr.Error()}
		} else {
			raw = data
		}
	} else if err == nil && rep.sessionless {
		raw = era.CompleteBytes(raw)
	}
	stdio.Answer(rep, id, res, raw, err)
}

// replier writes one JSON-RPC response as the HTTP response: plain
// JSON, or the message event of a stream already open.
type replier struct {
	w      http.ResponseWriter
	stream *sseStream
	// sessionless marks a 2026-07-28 request, whose results say
	// resultType and whose protocol errors carry an HTTP status of their
	// own (errorStatus).
	sessionless bool
}

func (p *replier) Reply(id, result []byte) error {
	return p.write(stdio.ResponseLine(id, result), http.StatusOK)
}

func (p *replier) ReplyError(id []byte, code int64, message string, data []byte) error {
	status := http.StatusOK
	if p.sessionless {
		status = errorStatus(code)
	}
	return p.write(stdio.ErrorLine(id, code, message, data), status)
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

// begin registers a call this path runs under its id, for the client's
// cancellation; false when the id is already running.
func (e *entry) begin(id string, cancel context.CancelFunc) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, dup := e.calls[id]; dup {
		return false
	}
	if e.calls == nil {
		e.calls = map[string]context.CancelFunc{}
	}
	e.calls[id] = cancel
	return true
}

func (e *entry) end(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.calls, id)
}

// cancel answers a notifications/cancelled for a call this path runs
// (202, as the SDK answers a notification); any other goes to the SDK.
func (e *entry) cancel(w http.ResponseWriter, m stdio.Message) bool {
	id := rawjson.Member(m.Params, "requestId")
	if id == nil {
		return false
	}
	e.mu.Lock()
	cancel, ok := e.calls[string(id)]
	e.mu.Unlock()
	if !ok {
		return false
	}
	cancel()
	w.WriteHeader(http.StatusAccepted)
	return true
}

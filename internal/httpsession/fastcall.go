package httpsession

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/rawjson"
	"github.com/evokore/evokore/internal/server"
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

// maxFastBody bounds the body the fast path reads; a larger one goes to
// the SDK.
const maxFastBody = stdio.MaxFrame

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

// readBody reads r's body for the fast path and returns the request with
// its body restored for the SDK.
func readBody(r *http.Request) (*http.Request, []byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxFastBody+1))
	r2 := r.Clone(r.Context())
	rest := r.Body
	r2.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), rest), rest}
	if len(body) > maxFastBody {
		return r2, nil, err
	}
	return r2, body, err
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
	if ip == nil || !plainPOST(r) || r.Header.Get("Mcp-Protocol-Version") != ip.ProtocolVersion || ip.ProtocolVersion >= newEra {
		return false
	}
	m, ok := stdio.ScanRequest(body)
	if !ok {
		return false
	}
	if m.Method == "notifications/cancelled" {
		return e.cancel(w, m)
	}
	if m.ID == nil {
		return false
	}
	p, ok := h.rt.TakeProxied(e.v.Session(), m.Params, sessionMeta)
	if !ok {
		return false
	}
	key := string(m.ID)
	ctx, cancel := context.WithCancel(tracing.FromHeader(r.Context(), r.Header))
	defer cancel()
	if !e.begin(key, cancel) {
		return false // the SDK answers a reused id as it always did
	}
	defer e.end(key)
	res, raw, err := p.Run(ctx)
	answer(w, m.ID, res, raw, err, false)
	h.saveIfChanged(r.Context(), e)
	return true
}

// fastStateless answers body, a POST without a session, when it is a
// 2026-07-28 tools/call of a proxied tool; false leaves it to the SDK.
func (h *Handler) fastStateless(w http.ResponseWriter, r *http.Request, body []byte) bool {
	version := r.Header.Get("Mcp-Protocol-Version")
	if version != newEra || !plainPOST(r) || r.Header.Get("Mcp-Method") != "tools/call" {
		return false
	}
	for k := range r.Header {
		if strings.HasPrefix(k, "Mcp-Param-") {
			return false
		}
	}
	m, ok := stdio.ScanRequest(body)
	if !ok || m.Method != "tools/call" || m.ID == nil {
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
	answer(w, m.ID, res, raw, err, true)
	return true
}

// answer writes a call's JSON-RPC response as application/json: the
// child's result bytes when raw is set (with the resultType a 2026-07-28
// result carries, when the child did not say), else res or err.
func answer(w http.ResponseWriter, id []byte, res *mcp.CallToolResult, raw []byte, err error, newEra bool) {
	rep := &replier{w: w}
	if err == nil && raw == nil {
		data, merr := server.ResultBytes(res, newEra)
		if merr != nil {
			err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "cannot encode the result: " + merr.Error()}
		} else {
			raw = data
		}
	} else if err == nil && newEra && rawjson.Member(raw, "resultType") == nil {
		raw = withResultType(raw)
	}
	stdio.Answer(rep, id, res, raw, err)
}

// withResultType is a result object with "resultType":"complete" first.
func withResultType(obj []byte) []byte {
	out := make([]byte, 0, len(obj)+32)
	out = append(out, `{"resultType":"complete"`...)
	rest := obj[rawjson.SkipSpace(obj, 1):]
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}

// replier writes one JSON-RPC response line as an HTTP response.
type replier struct{ w http.ResponseWriter }

func (p *replier) Reply(id, result []byte) error {
	return p.write(stdio.ResponseLine(id, result))
}

func (p *replier) ReplyError(id []byte, code int64, message string, data []byte) error {
	return p.write(stdio.ErrorLine(id, code, message, data))
}

func (p *replier) write(line []byte) error {
	p.w.Header().Set("Content-Type", "application/json")
	p.w.WriteHeader(http.StatusOK)
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
	if id == nil || m.ID != nil {
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

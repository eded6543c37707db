package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/childauth"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/rawjson"
)

// A carrier takes one tools/call to a child's connection and brings the
// child's answer back: how a call travels, as net/http's RoundTripper is,
// never what it means. Each transport has one: the line wire for a stdio
// child (wire.go), the SDK's client over the child's http.Client for a
// streamable HTTP or SSE child (httpCarrier). What the call means (the
// era's _meta, input_required, the outcome the model reads) is the
// caller's: call.go and the era adapter (era.go).
//
// ctx is the call's: its cancel is the client's. The request timeout
// ends at req.deadline. A carrier returns ctx's error when ctx ended
// first, context.DeadlineExceeded at the deadline, a *jsonrpc.Error the
// child answered with, errStoppedReading when the request did not fit in
// the child's input, or an error wrapping mcp.ErrConnectionClosed when
// the connection ended under the call.
type carrier interface {
	carry(ctx context.Context, req toolRequest) (answer, error)
}

// toolRequest is a tools/call as a carrier sends it: the child's own
// tool name, the arguments as the bytes they are (an object), the _meta
// and, in a retry after input_required, the answers and the child's
// requestState; deadline is when the request timeout ends. (A deadline,
// not a context of its own: the line wire waits on one timer, which
// costs a quarter of a context's allocations on every call.)
type toolRequest struct {
	name      string
	args      json.RawMessage
	meta      mcp.Meta
	responses mcp.InputResponseMap
	state     string
	deadline  time.Time
	// taskTTL, when set, asks the child to run the call as a task of
	// that lifetime (childtask.go): its answer is the task created.
	taskTTL time.Duration
}

// answer is a child's result as its carrier brings it: the bytes the
// child sent (the line wire) or the SDK's decoding of them.
type answer struct {
	raw []byte
	res *mcp.CallToolResult
}

// errLost ends a call whose child's output ended under it.
var errLost = fmt.Errorf("%w: the server's output ended", mcp.ErrConnectionClosed)

// httpCarrier carries a call to a streamable HTTP or SSE child through
// the SDK's client session, whose transport sends it with the child's
// http.Client (httpTransport): authorization plugs in there. post, for a
// streamable HTTP child, sends what the SDK's client has no method for:
// the child's own tasks (childtask.go).
type httpCarrier struct {
	cs   *mcp.ClientSession
	post *poster
}

func (h httpCarrier) carry(ctx context.Context, req toolRequest) (answer, error) {
	if req.taskTTL > 0 && h.post != nil {
		// The SDK's CallToolParams has no task: the call goes as the
		// bytes of a task-augmented tools/call.
		params, err := json.Marshal(taskCall{Meta: req.meta, Name: req.name, Arguments: req.args,
			InputResponses: req.responses, RequestState: req.state, Task: taskParams{TTL: req.taskTTL.Milliseconds()}})
		if err != nil {
			return answer{}, err
		}
		raw, err := h.request(ctx, "tools/call", params, req.deadline)
		return answer{raw: raw}, err
	}
	ctx, cancel := context.WithDeadline(ctx, req.deadline)
	defer cancel()
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Meta: req.meta, Name: req.name, Arguments: req.args, InputResponses: req.responses, RequestState: req.state})
	return answer{res: res}, err
}

func (h httpCarrier) declaresTasks() bool { return h.post != nil && h.post.tasks.Load() }

func (h httpCarrier) request(ctx context.Context, method string, params []byte, deadline time.Time) ([]byte, error) {
	if h.post == nil {
		return nil, fmt.Errorf("%s: an SSE server's connection carries no such request", method)
	}
	return h.post.request(ctx, h.cs, method, params, deadline)
}

// taskCall is a task-augmented tools/call's params.
type taskCall struct {
	Meta           mcp.Meta             `json:"_meta,omitempty"`
	Name           string               `json:"name"`
	Arguments      json.RawMessage      `json:"arguments,omitempty"`
	InputResponses mcp.InputResponseMap `json:"inputResponses,omitempty"`
	RequestState   string               `json:"requestState,omitempty"`
	Task           taskParams           `json:"task"`
}

type taskParams struct {
	TTL int64 `json:"ttl"`
}

// httpTransport is the MCP transport to a remote child (spec resolved):
// the one place where its http.Client is built, with the configured
// headers and evokore's authorization to the child (Options.Authorizer).
// The streamable HTTP transport takes the authorizer's OAuth handler,
// which the SDK asks for a token on every request of that client and on
// a 401 or 403 (and fails the connection when a call is cancelled during
// a login); the SSE transport has no such hook, so the handler wraps
// its client's round tripper (childauth.Transport).
//
// A streamable HTTP child also gets a poster: its requests go with the
// same headers, through childauth.Transport with the same handler; the
// SDK's client reads the handshake's answer through it (greeter).
func (c *child) httpTransport(spec config.Server, timeout time.Duration) (mcp.Transport, *poster, error) {
	if spec.URL == "" {
		return nil, nil, errFatal{fmt.Errorf("HTTP server '%s' requires a 'url' field", spec.ID)}
	}
	var h auth.OAuthHandler
	if a := c.sup.opts.Authorizer; a != nil {
		// The spec as written: tokens are kept by the server's identity,
		// and an instance's are its caller's.
		h = a.Handler(c.spec, c.authOwner())
	}
	var rt http.RoundTripper = http.DefaultTransport
	if len(spec.Headers) > 0 {
		rt = childauth.Headers{Set: spec.Headers, Base: rt}
	}
	if spec.Transport == config.TransportSSE {
		if h != nil {
			rt = childauth.Transport(h, rt)
		}
		return &sseTransport{inner: &mcp.SSEClientTransport{Endpoint: spec.URL, HTTPClient: clientOf(rt)}, life: c.sup.ctx, timeout: timeout}, nil, nil
	}
	post := &poster{url: spec.URL, client: &http.Client{Transport: rt}}
	if h != nil {
		post.client.Transport = childauth.Transport(h, rt)
	}
	return &mcp.StreamableClientTransport{Endpoint: spec.URL, HTTPClient: &http.Client{Transport: greeter{base: rt, p: post}}, OAuthHandler: h}, post, nil
}

// clientOf is the http.Client over rt; nil (the SDK's default client)
// when rt adds nothing.
func clientOf(rt http.RoundTripper) *http.Client {
	if rt == http.DefaultTransport {
		return nil
	}
	return &http.Client{Transport: rt}
}

// A poster sends a streamable HTTP child the JSON-RPC requests of a
// child's own task (childtask.go), which the SDK's client has no method
// for: each as a POST to the child's URL in the SDK client's session
// (its Mcp-Session-Id and negotiated MCP-Protocol-Version), over the
// same headers and authorization. The answer is application/json or a
// text/event-stream read until the response to the request; a request
// the child sends on that stream (a task's input: elicitation, sampling,
// roots) is answered as the SDK's client answers one on its own
// streams, through the same middleware and handlers, so it reaches the
// caller as over stdio; notifications on that stream are dropped.
//
// tasks is what the handshake's answer declared (handshakeTasks), which
// the SDK's client reads through the greeter.
type poster struct {
	url    string
	client *http.Client
	// receive answers the child's requests on a poster's streams, as
	// the SDK's client does on its own (receiving).
	receive mcp.MethodHandler
	// greeted is set once the first POST's answer, the handshake's, was
	// read.
	greeted, tasks atomic.Bool
	next           atomic.Uint64
}

// postIDPrefix starts the ids of a poster's requests.
const postIDPrefix = "evokore-post-"

// request sends method with params (a JSON object) in cs's session and
// returns its result: a *jsonrpc.Error the child answered, an error
// wrapping mcp.ErrSessionMissing when the child forgot the session, or
// ctx's error (context.DeadlineExceeded at deadline).
func (p *poster) request(ctx context.Context, cs *mcp.ClientSession, method string, params []byte, deadline time.Time) ([]byte, error) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	id := strconv.AppendUint([]byte(`"`+postIDPrefix), p.next.Add(1), 10)
	id = append(id, '"')
	body := make([]byte, 0, len(params)+len(method)+64)
	body = append(append(append(body, `{"jsonrpc":"2.0","id":`...), id...), `,"method":`...)
	body = rawjson.Quote(body, method)
	body = append(append(append(body, `,"params":`...), params...), '}')
	resp, err := p.post(ctx, cs, body)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound && cs.ID() != "":
		return nil, fmt.Errorf("%s: %w", method, mcp.ErrSessionMissing)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		head, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("%s: the server answered HTTP %d: %s", method, resp.StatusCode, bytes.TrimSpace(head))
	}
	var res []byte
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" {
		res, err = p.events(ctx, cs, resp.Body, id)
	} else {
		var msg []byte
		if msg, err = io.ReadAll(io.LimitReader(resp.Body, maxFrame+1)); err == nil {
			if res, err = responseTo(msg, id); res == nil && err == nil {
				err = fmt.Errorf("the server answered %s with no response to it", method)
			}
		}
	}
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return res, err
}

// post POSTs one JSON-RPC message in cs's session.
func (p *poster) post(ctx context.Context, cs *mcp.ClientSession, body []byte) (*http.Response, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	if sid := cs.ID(); sid != "" {
		hr.Header.Set("Mcp-Session-Id", sid)
	}
	if ir := cs.InitializeResult(); ir != nil && ir.ProtocolVersion != "" {
		hr.Header.Set("MCP-Protocol-Version", ir.ProtocolVersion)
	}
	return p.client.Do(hr)
}

// events reads a text/event-stream answer until the response to id.
func (p *poster) events(ctx context.Context, cs *mcp.ClientSession, body io.Reader, id []byte) ([]byte, error) {
	r := bufio.NewReader(io.LimitReader(body, 4*maxFrame))
	var data []byte
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long data line: read the rest of it.
			line = append([]byte(nil), line...)
			var rest []byte
			if rest, err = r.ReadBytes('\n'); len(line)+len(rest) > maxFrame {
				return nil, errors.New("the server sent an event over the size limit")
			}
			line = append(line, rest...)
		}
		if err != nil && len(line) == 0 {
			if res, rerr := responseTo(data, id); res != nil || rerr != nil {
				return res, rerr // the last event, without its blank line
			}
			if err == io.EOF {
				err = errors.New("the server's event stream ended before its response")
			}
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(append(data, bytes.TrimPrefix(v, []byte(" "))...), '\n')
			if len(data) > maxFrame {
				return nil, errors.New("the server sent an event over the size limit")
			}
			continue
		}
		if len(line) > 0 || len(data) == 0 {
			continue // another field, or an event without data
		}
		msg := data
		data = nil
		if res, err := responseTo(msg, id); res != nil || err != nil {
			return res, err
		}
		p.answer(ctx, cs, msg)
	}
}

// responseTo is msg's result when msg is the response to id (a
// *jsonrpc.Error when it answered one); nil, nil for another message.
func responseTo(msg, id []byte) ([]byte, error) {
	if rawjson.Member(msg, "method") != nil || !bytes.Equal(bytes.TrimSpace(rawjson.Member(msg, "id")), id) {
		return nil, nil
	}
	if e := rawjson.Member(msg, "error"); e != nil {
		var we jsonrpc.Error
		if err := json.Unmarshal(e, &we); err != nil {
			return nil, fmt.Errorf("the server answered with an error evokore cannot read: %w", err)
		}
		return nil, &we
	}
	if res := rawjson.Member(msg, "result"); firstNonSpace(res) == '{' {
		return res, nil
	}
	return nil, errors.New("the server answered without a result")
}

// answer answers msg when it is a request of the child's, in the same
// session: as the SDK's client answers one on its own streams (the
// poster's receive: the connection's receiving middleware over the
// client's handlers), a ping with an empty result.
func (p *poster) answer(ctx context.Context, cs *mcp.ClientSession, msg []byte) {
	id, method := rawjson.Member(msg, "id"), rawjson.Member(msg, "method")
	if id == nil || method == nil {
		return // a notification
	}
	m, _ := rawjson.String(method)
	var res any = struct{}{}
	var err error
	if m != "ping" {
		var req mcp.Request
		if req, err = clientRequest(cs, m, rawjson.Member(msg, "params")); err == nil && p.receive == nil {
			err = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "evokore does not answer " + m + " here"}
		} else if err == nil {
			res, err = p.receive(ctx, m, req)
		}
	}
	body := append(append([]byte(`{"jsonrpc":"2.0","id":`), bytes.TrimSpace(id)...), ',')
	var out []byte
	if err == nil {
		out, err = json.Marshal(res)
	}
	if err == nil {
		body = append(append(append(body, `"result":`...), out...), '}')
	} else {
		we := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		errors.As(err, &we)
		out, _ = json.Marshal(we)
		body = append(append(append(body, `"error":`...), out...), '}')
	}
	if resp, err := p.post(ctx, cs, body); err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		_ = resp.Body.Close()
	}
}

// greeter is the RoundTripper of the SDK's client to a streamable HTTP
// child: it reads the answer to the client's first POST, the handshake,
// for the tasks capability (handshakeTasks) into p, and passes every
// request through unchanged.
type greeter struct {
	base http.RoundTripper
	p    *poster
}

func (g greeter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := g.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || g.p.greeted.Load() {
		return resp, err
	}
	if resp.StatusCode != http.StatusOK {
		g.p.greeted.Store(true)
		return resp, nil
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	resp.Body = &greetBody{ReadCloser: resp.Body, p: g.p, events: mt == "text/event-stream"}
	return resp, nil
}

// greetBody is the handshake's answer as the SDK reads it: a JSON body
// is read whole at its end, an event stream line by line.
type greetBody struct {
	io.ReadCloser
	p      *poster
	events bool
	buf    []byte
}

func (b *greetBody) Read(out []byte) (int, error) {
	n, err := b.ReadCloser.Read(out)
	if b.p.greeted.Load() {
		return n, err
	}
	b.buf = append(b.buf, out[:n]...)
	for b.events {
		i := bytes.IndexByte(b.buf, '\n')
		if i < 0 {
			break
		}
		if v, ok := bytes.CutPrefix(bytes.TrimRight(b.buf[:i], "\r"), []byte("data:")); ok {
			b.greet(v)
		}
		b.buf = b.buf[i+1:]
	}
	if err != nil && !b.events {
		b.greet(b.buf)
	}
	if err != nil || len(b.buf) > maxFrame {
		b.p.greeted.Store(true) // nothing to read there: stop looking
	}
	return n, err
}

func (b *greetBody) greet(msg []byte) {
	if tasks, ok := handshakeTasks(msg); ok {
		b.p.tasks.Store(tasks)
		b.p.greeted.Store(true)
	}
}

func (b *greetBody) Close() error {
	b.p.greeted.Store(true)
	return b.ReadCloser.Close()
}

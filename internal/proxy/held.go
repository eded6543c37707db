package proxy

//lint:file-ignore SA1019 sampling and roots pass through on purpose; see docs/decisions.md

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

// Held calls: a 2025-11-25 child's requests for a 2026-07-28 caller.
//
// A child that speaks the old era alone asks for input with a request of
// its own (elicitation/create, sampling/createMessage, roots/list) and
// waits for the answer inside its tool call. A caller of the new era
// takes no request: it answers input_required by calling again. So the
// router makes such a child look like one of the new era. A call of a
// caller of the new era to a connection of the old era runs detached
// from the caller's request: when the child asks, the child's request is
// held, and the caller's call is answered input_required with it and a
// requestState naming the held call (a random id, sealed to the call and
// the caller as a child's own state is, seal.go). The retry with the
// answer takes the held call out of the table (whoever takes it owns
// it), hands the answer to the child's request, and waits again for the
// call's result or the child's next request. The layers above see a
// child's own input_required (approvals wrap it, tasks carry it).
//
// A held call lives on the replica it started on, for
// InstanceSettings.InputHold per request for input: unanswered by then,
// the child's request is answered with an error and its call cancelled.
// A retry that finds no held call (answered already, expired, held by
// another replica) is refused, saying to call again. The whole call stays
// within the request timeout, as a call of a 2025-11-25 caller whose
// client takes its time to answer does.

// heldPrefix marks the child's state of a held call inside the sealed
// requestState (the child itself has none).
const heldPrefix = "evokore-held."

// heldInput is the id of the input request of a held call's round.
const heldInput = "evokore-held"

// heldKey carries a held call in the context its route was begun with,
// where the child's requests find it (peerFor).
type heldKey struct{}

// heldCall is one call of a caller of the new era to a child of the old
// era, running detached from the caller's request.
type heldCall struct {
	server, binding string
	// raw holds the result as the child's bytes.
	raw *router.RawResult
	// ctx is the call's own; cancel ends it (the caller gave up, the
	// hold ran out, the supervisor stopped).
	ctx    context.Context
	cancel context.CancelFunc
	// asks takes the child's requests to whoever waits on the call.
	asks chan heldAsk
	// done takes the call's outcome, once.
	done chan heldOutcome
}

// heldAsk is one request of the child, waiting for its answer.
type heldAsk struct {
	req   mcp.InputRequest
	reply chan heldReply // buffered: whoever answers never blocks
}

type heldReply struct {
	res mcp.InputResponse
	err error
}

type heldOutcome struct {
	res *mcp.CallToolResult
	err error
}

// parked is a held call waiting for the caller's retry: the child's
// request it waits with, and the timer that gives up on it.
type parked struct {
	h     *heldCall
	ask   heldAsk
	timer *time.Timer
}

// heldCalls is the table of held calls waiting for a retry, by id.
type heldCalls struct {
	mu   sync.Mutex
	byID map[string]*parked
}

// put parks p under a new id, with the timer expire makes (set under
// the lock, so whoever takes p sees it).
func (t *heldCalls) put(p *parked, expire func(id string) *time.Timer) string {
	id := randomHex(16)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID == nil {
		t.byID = map[string]*parked{}
	}
	t.byID[id] = p
	p.timer = expire(id)
	return id
}

// take removes the parked call id names; nil when there is none.
func (t *heldCalls) take(id string) *parked {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.byID[id]
	delete(t.byID, id)
	return p
}

// takeAll empties the table, at Close.
func (t *heldCalls) takeAll() []*parked {
	t.mu.Lock()
	defer t.mu.Unlock()
	all := make([]*parked, 0, len(t.byID))
	for id, p := range t.byID {
		all = append(all, p)
		delete(t.byID, id)
	}
	return all
}

// holds reports whether a call of sess on k runs held: its caller takes
// no request, and k's child asks with requests and was offered something
// to ask for (a child offered nothing keeps the plain path).
func holds(k *conn, sess *session.Session) bool {
	return k.asks && !k.newEra && roundTrips(sess)
}

// offersInput reports whether a child the router's client of opts
// connects to is offered sampling, elicitation (both by their handlers)
// or roots.
func offersInput(opts *mcp.ClientOptions) bool {
	return opts.CreateMessageHandler != nil || opts.ElicitationHandler != nil || hasRoots(opts.Capabilities)
}

// hold runs t detached from ctx and answers what it comes to first: its
// result, or input_required with the child's first request. release is
// called once the call ends, whenever that is.
func (s *Supervisor) hold(ctx context.Context, t toolCall, binding string, release func()) (*mcp.CallToolResult, error) {
	dest := t.c.Raw
	// The result is read as bytes into a RawResult of the held call's
	// own: the request it answers may be a later one (deliver).
	raw := &router.RawResult{}
	detached := *t.c
	detached.Raw = raw
	t.c = &detached
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h := &heldCall{server: t.ch.spec.ID, binding: binding, raw: raw, cancel: cancel, asks: make(chan heldAsk), done: make(chan heldOutcome, 1)}
	h.ctx = context.WithValue(dctx, heldKey{}, h)
	// Close waits for the held call: it is counted only while Close has
	// not begun (the order launch keeps too).
	s.reconf.Lock()
	if s.ctx.Err() != nil {
		s.reconf.Unlock()
		cancel()
		release()
		return errorResult(fmt.Sprintf("evokore is stopping; '%s' was not called", t.c.Entry.Original)), nil
	}
	s.wg.Add(1)
	s.reconf.Unlock()
	stopWithSup := context.AfterFunc(s.ctx, cancel)
	childToken, end := s.routes.begin(h.ctx, t.ch.spec.ID, t.c.Session, t.c.Meta.GetMeta()["progressToken"])
	t.req.meta = put(t.req.meta, "progressToken", childToken)
	go func() {
		defer s.wg.Done()
		defer func() {
			end()
			stopWithSup()
			cancel()
			release()
		}()
		res, _, _, err := t.send(h.ctx, nil, "")
		res, err = t.outcome(h.ctx, res, err)
		h.done <- heldOutcome{res, err}
	}()
	return s.awaitHeld(ctx, h, dest)
}

// awaitHeld waits for the held call's result or the child's next
// request, which it parks and answers input_required with. A caller
// that gives up meanwhile ends the call.
func (s *Supervisor) awaitHeld(ctx context.Context, h *heldCall, dest *router.RawResult) (*mcp.CallToolResult, error) {
	select {
	case o := <-h.done:
		return h.deliver(o, dest)
	case a := <-h.asks:
		id := s.held.put(&parked{h: h, ask: a}, s.expireHeld)
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{heldInput: a.req},
			RequestState:  s.sealState(h.server, h.binding, heldPrefix+id),
		}, nil
	case <-ctx.Done():
		h.cancel()
		return nil, ctx.Err()
	}
}

// expireHeld is the timer that gives up on the call parked as id once
// its caller did not retry within the hold.
func (s *Supervisor) expireHeld(id string) *time.Timer {
	hold := s.instanceSettings.InputHold
	return time.AfterFunc(hold, func() {
		if p := s.held.take(id); p != nil {
			p.giveUp(fmt.Errorf("the client that called %s did not answer within %s (EVOKORE_INPUT_HOLD_MS)", p.h.server, hold))
		}
	})
}

// deliver is the call's outcome as the request it answers takes it: the
// child's bytes into dest when that request takes bytes, else decoded.
func (h *heldCall) deliver(o heldOutcome, dest *router.RawResult) (*mcp.CallToolResult, error) {
	if o.err != nil || o.res == nil || o.res != h.raw.Result {
		return o.res, o.err
	}
	if dest != nil {
		dest.Bytes, dest.Result = h.raw.Bytes, h.raw.Result
		return o.res, nil
	}
	full := &mcp.CallToolResult{}
	if err := json.Unmarshal(h.raw.Bytes, full); err != nil {
		return errorResult(fmt.Sprintf("the '%s' server answered with a result evokore cannot read: %v", h.server, err)), nil
	}
	delete(full.Meta, mcp.MetaKeyServerInfo)
	return full, nil
}

// giveUp answers the parked request with err and ends its call.
func (p *parked) giveUp(err error) {
	p.timer.Stop()
	p.ask.reply <- heldReply{err: err}
	p.h.cancel()
}

// resumeHeld answers the held call a retry's state names with the
// retry's answer, and waits for what the call comes to next. ok is false
// when inner names no held call (it is the child's own state).
func (s *Supervisor) resumeHeld(ctx context.Context, c *router.Call, inner string, responses mcp.InputResponseMap, server, binding string, what func() string) (res *mcp.CallToolResult, ok bool, err error) {
	id, ok := strings.CutPrefix(inner, heldPrefix)
	if !ok {
		return nil, false, nil
	}
	p := s.held.take(id)
	if p == nil {
		return nil, true, errState(what(), "belongs to a call that is no longer held (answered already, not answered within EVOKORE_INPUT_HOLD_MS, or held by another replica)")
	}
	if p.h.server != server || p.h.binding != binding {
		// The seal already binds both; a mismatch is a bug, not a caller.
		p.giveUp(fmt.Errorf("evokore lost track of the call %s asked in", server))
		return nil, true, errState(what(), "belongs to another call")
	}
	p.timer.Stop()
	answer, aerr := decodeAnswer(p.ask.req, responses[heldInput])
	if aerr != nil {
		// The state is spent once taken: the child's request is
		// answered with the error, and the caller calls again.
		p.giveUp(fmt.Errorf("the client that called %s answered with nothing evokore can pass on", server))
		return nil, true, errState(what(), "came without an answer evokore can pass on ("+aerr.Error()+"), and the call it belonged to has ended")
	}
	p.ask.reply <- heldReply{res: answer}
	res, err = s.awaitHeld(ctx, p.h, c.Raw)
	return res, true, err
}

// decodeAnswer is the caller's answer to req in the shape the child's
// request takes.
func decodeAnswer(req mcp.InputRequest, got mcp.InputResponse) (mcp.InputResponse, error) {
	if got == nil {
		return nil, fmt.Errorf("inputResponses has no %q", heldInput)
	}
	var out mcp.InputResponse
	switch req.(type) {
	case *mcp.ElicitParams:
		out = &mcp.ElicitResult{}
	case *mcp.CreateMessageParams:
		out = &mcp.CreateMessageResult{}
	case *mcp.ListRootsParams:
		out = &mcp.ListRootsResult{}
	}
	b, err := json.Marshal(got)
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	return out, err
}

// closeHeld answers every parked request with an error, at Close.
func (s *Supervisor) closeHeld() {
	for _, p := range s.held.takeAll() {
		p.giveUp(fmt.Errorf("evokore is stopping"))
	}
}

// heldOf is the held call ctx (an open call's, routes.caller) belongs
// to; nil for a call that is not held.
func heldOf(ctx context.Context) *heldCall {
	if ctx == nil {
		return nil
	}
	h, _ := ctx.Value(heldKey{}).(*heldCall)
	return h
}

// ask hands the child's request to whoever waits on the call, and waits
// for its answer; ctx is the child's request's.
func (h *heldCall) ask(ctx context.Context, req mcp.InputRequest) (mcp.InputResponse, error) {
	a := heldAsk{req: req, reply: make(chan heldReply, 1)}
	select {
	case h.asks <- a:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-h.ctx.Done():
		return nil, fmt.Errorf("the call %s asked in has ended", h.server)
	}
	select {
	case r := <-a.reply:
		return r.res, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// heldPeer is the caller of a held call as the child's requests see it:
// what its request declared, and requests that become input_required.
type heldPeer struct {
	h      *heldCall
	caller session.Peer
}

func (p heldPeer) InitializeParams() *mcp.InitializeParams { return p.caller.InitializeParams() }

func (p heldPeer) NotifyProgress(context.Context, *mcp.ProgressNotificationParams) error {
	return nil
}

func (p heldPeer) Log(context.Context, *mcp.LoggingMessageParams) error { return nil }

// CreateMessage asks the caller for a completion by input_required.
func (p heldPeer) CreateMessage(ctx context.Context, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	r, err := p.h.ask(ctx, params)
	if err != nil {
		return nil, err
	}
	return r.(*mcp.CreateMessageResult), nil
}

// Elicit asks the caller by input_required (the message is named by the
// caller of Elicit already).
func (p heldPeer) Elicit(ctx context.Context, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	r, err := p.h.ask(ctx, params)
	if err != nil {
		return nil, err
	}
	return r.(*mcp.ElicitResult), nil
}

// ListRoots asks the caller for its roots by input_required.
func (p heldPeer) ListRoots(ctx context.Context, params *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	r, err := p.h.ask(ctx, params)
	if err != nil {
		return nil, err
	}
	return r.(*mcp.ListRootsResult), nil
}

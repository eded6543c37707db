package policy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/era"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

// Options assemble a Policy.
type Options struct {
	Permissions *config.Permissions
	// Servers give the rate limits and cooldowns of proxied tools.
	Servers []config.Server
	// DefaultDeny is EVOKORE_SECURITY_DEFAULT_DENY.
	DefaultDeny bool
	// Home holds pending-approvals.json and denied-approvals.json.
	Home string
	// ApprovalTTL is how long a token lives; Cooldown is the default
	// cooldown of a failing call.
	ApprovalTTL time.Duration
	Cooldown    time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ApprovalMode is auto, operator or token ("" is auto).
	ApprovalMode string
	// Binders add to an approval what else must not change between
	// approval and run, by tool name: execute_skill binds the code of
	// the step it will run, and shows it.
	Binders map[string]Binder
	// OnApproval, when set, is told of every approval asked, granted
	// (the approved call is about to run) and denied, for the audit log
	// and webhooks. It must return quickly.
	OnApproval func(ApprovalEvent)
}

// ApprovalEvent is one step of an approval, as operators' records see it:
// never a token.
type ApprovalEvent struct {
	// Kind is StatePending (asked), StateApproved (granted: the call
	// runs) or StateDenied.
	Kind    string
	ID      string
	Tool    string
	Session string
	Tenant  string
	// Mode is how the approval travels: operator, elicitation or token.
	Mode string
}

// Policy is every per-call decision, installed into the router as its
// stages: permission, approval, rate limit, cooldown.
//
// What a reload of permissions.yml or mcp.config.json changes (the roles
// and rules, the rate limits, the cooldowns, the approvals mode) is one
// immutable [Rules] value, replaced whole by [Policy.Reload]; each stage
// reads it once, without locking. Pending approvals and the cooldowns
// already running outlive a reload.
type Policy struct {
	Approvals *Approvals
	Cooldowns *Cooldowns
	fallback  time.Duration
	binders   map[string]Binder
	notify    func(ApprovalEvent)
	now       func() time.Time
	rules     atomic.Pointer[Rules]
	// sharedLimits, when set, holds every rules' buckets (scale-out).
	sharedLimits RateBackend
}

// Rules are the policy's reloadable part. They never change once built.
type Rules struct {
	RBAC     *RBAC
	Limits   *Limits
	cooldown map[string]time.Duration
	// global are the servers whose rate limits and cooldowns every
	// caller shares (limitScope "global").
	global map[string]bool
	mode   string
}

// callerOf is whom c counts against in its server's rate limits and
// cooldowns: "" (everyone) for a server whose limitScope is "global",
// else who calls (session.CallerOf).
func (r *Rules) callerOf(c *router.Call) string {
	if r.global[c.Entry.Server] {
		return ""
	}
	return session.CallerOf(c.Session)
}

// New assembles the policy.
func New(o Options) *Policy {
	p := &Policy{
		Approvals: NewApprovals(o.Home, o.ApprovalTTL, o.Now),
		Cooldowns: NewCooldowns(o.Now),
		fallback:  o.Cooldown,
		binders:   o.Binders,
		now:       o.Now,
		notify:    o.OnApproval,
	}
	p.rules.Store(newRules(o, nil))
	return p
}

// Reload replaces the roles, rules, rate limits, cooldowns and approvals
// mode with those of o (its Home, TTLs and binders are ignored). A rate
// limit that did not change keeps its bucket, tokens spent included, so a
// reload never refills a budget.
func (p *Policy) Reload(o Options) {
	o.Now = p.now
	r := newRules(o, p.rules.Load().Limits)
	if p.sharedLimits != nil {
		r.Limits.Share(p.sharedLimits)
	}
	p.rules.Store(r)
}

// ShareLimits moves the rate-limit buckets into backend, for the rules in
// force and for every later reload's: a limit then holds across every
// replica sharing the backend. Called once, before the first call.
func (p *Policy) ShareLimits(backend RateBackend) {
	p.sharedLimits = backend
	p.rules.Load().Limits.Share(backend)
}

// Rules returns the rules in force.
func (p *Policy) Rules() *Rules { return p.rules.Load() }

func newRules(o Options, prev *Limits) *Rules {
	r := &Rules{
		RBAC:     NewRBAC(o.Permissions, o.DefaultDeny),
		Limits:   NewLimits(o.Servers, o.Now).carry(prev),
		cooldown: map[string]time.Duration{},
		global:   map[string]bool{},
		mode:     o.ApprovalMode,
	}
	if !ValidMode(r.mode) {
		r.mode = ModeAuto
	}
	for _, s := range o.Servers {
		if s.CooldownMs != nil {
			r.cooldown[s.ID] = time.Duration(*s.CooldownMs) * time.Millisecond
		}
		if s.LimitScope == config.LimitGlobal {
			r.global[s.ID] = true
		}
	}
	return r
}

// Stages are the policy's pipeline stages by name. The composition root
// puts them in order around the router's own (quarantine, validation).
type Stages struct {
	Permission router.Stage
	Approval   router.Stage
	RateLimit  router.Stage
	Cooldown   router.Stage
}

// Stages returns the policy's stages.
func (p *Policy) Stages() Stages {
	return Stages{
		Permission: permissionStage{p},
		Approval:   approvalStage{p},
		RateLimit:  rateLimitStage{p},
		Cooldown:   cooldownStage{p},
	}
}

// Observers return what the policy must see of every dispatched call: the
// cooldown starts after a failure.
func (p *Policy) Observers() []router.Observer {
	return []router.Observer{cooldownStage{p}}
}

type permissionStage struct{ p *Policy }

func (s permissionStage) Check(_ context.Context, c *router.Call) (*mcp.CallToolResult, error) {
	rbac := s.p.Rules().RBAC
	if role := c.Session.Role; role != "" && !rbac.HasRole(role) {
		if readOnlyNative(c.Entry) {
			return nil, nil
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: UndefinedRoleText(role, rbac.File())}
	}
	switch levelOf(rbac, c.Session.Role, c.Entry) {
	case Deny:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: DeniedText(c.Entry.Name)}
	case RequireApproval:
		c.NeedsApproval = true
	}
	return nil, nil
}

// levelOf is the level of e under role. A child's tool that bears the
// name of one of evokore's natives (a nested evokore's run_code, listed
// here as me2_run_code, or any child's tool claiming that name) is also
// bound by every rule that names the native, when that rule is
// stricter: a rule written for run_code is about what run_code does,
// and nesting a router must not be the way around it. What a child says
// of itself is not asked: its tools' names can only make rules stricter.
func levelOf(rbac *RBAC, role string, e *catalog.Entry) Level {
	lvl := rbac.Level(role, e.Name)
	if e.Source == catalog.SourceNative || e.Original == "" {
		return lvl
	}
	if _, isNative := native.Lookup(e.Original); !isNative {
		return lvl
	}
	if named, ok := rbac.Named(role, e.Original); ok && named > lvl {
		return named
	}
	return lvl
}

// readOnlyNative reports whether e is one of evokore's own tools that only
// read state: the ones still served under an undefined role.
func readOnlyNative(e *catalog.Entry) bool {
	return e.Source == catalog.SourceNative && e.Tool.Annotations != nil && e.Tool.Annotations.ReadOnlyHint
}

type approvalStage struct{ p *Policy }

func (s approvalStage) notify(kind, id, mode string, c *router.Call) {
	if s.p.notify != nil {
		s.p.notify(ApprovalEvent{Kind: kind, ID: id, Tool: c.Entry.Name, Session: c.Session.ID, Tenant: c.Session.Identity.Tenant, Mode: mode})
	}
}

// Check strips the token from every call (no child or handler ever sees
// it) and lets a call that needs approval run only once a human approved
// exactly that call, by the policy's mode (see Approvals).
func (s approvalStage) Check(ctx context.Context, c *router.Call) (*mcp.CallToolResult, error) {
	token, args := takeToken(c.Args)
	c.Args = args
	if !c.NeedsApproval {
		return nil, nil
	}
	req, refused := s.request(c, args)
	if refused != nil {
		return refused, nil
	}
	mode := s.p.Rules().mode
	runOnce := s.runOnce(c)
	switch {
	case mode == ModeToken:
		return s.byToken(c, req, token, runOnce)
	case mode == ModeAuto && roundTrips(c) && c.Run == "":
		// A program's call cannot answer input_required mid-run: it
		// waits for the operator instead (below).
		return s.inputRequired(c, req, runOnce)
	case mode == ModeAuto && canElicit(c):
		return s.byElicitation(ctx, c, req)
	}
	return s.byOperator(ctx, c, req, runOnce)
}

// request is the approval request for the call: bound to the session, the
// tool, the arguments and what the tool's binder reads of them (set on
// the call as c.Bound). A call that cannot be bound is refused.
func (s approvalStage) request(c *router.Call, args json.RawMessage) (Request, *mcp.CallToolResult) {
	var bound Bound
	if bind := s.p.binders[c.Entry.Name]; bind != nil {
		var err error
		if bound, err = bind(args); err != nil {
			return Request{}, errorResult(CannotApproveText(c.Entry.Name, err))
		}
		c.Bound = bound.Key
	}
	binding, err := Binding(c.Session.ID, c.Entry, args, bound.Key)
	if err != nil {
		return Request{}, errorResult(CannotApproveText(c.Entry.Name, err))
	}
	return Request{Session: c.Session.ID, Tenant: c.Session.Identity.Tenant, Tool: c.Entry.Name, Binding: binding,
		Summary: ShowArguments(args) + showBound(bound.Shown)}, nil
}

// runOnce returns what lets the call run on the approval id: the approval
// is consumed just before dispatch, so a call a later stage rejects keeps
// its approval; of concurrent retries exactly one runs.
func (s approvalStage) runOnce(c *router.Call) func(id, mode string) (*mcp.CallToolResult, error) {
	a := s.p.Approvals
	return func(id, mode string) (*mcp.CallToolResult, error) {
		c.BeforeDispatch(func() (*mcp.CallToolResult, error) {
			if a.Consume(id) {
				s.notify(StateApproved, id, mode, c)
				return nil, nil
			}
			return errorResult(UsedApprovalText(c.Entry.Name)), nil
		})
		return nil, nil
	}
}

// byToken approves by token: a retry carrying an approved token runs, a
// denied one is refused; otherwise a token is minted and the call is
// intercepted with it.
func (s approvalStage) byToken(c *router.Call, req Request, token string, runOnce func(id, mode string) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	a := s.p.Approvals
	if token != "" {
		id, state, err := a.Redeem(req.Binding, token)
		if err != nil {
			return errorResult(err.Error()), nil
		}
		switch state {
		case StateApproved:
			return runOnce(id, ModeToken)
		case StateDenied:
			s.notify(StateDenied, id, ModeToken, c)
			return errorResult(DeniedApprovalText(c.Entry.Name, id)), nil
		}
	}
	token, err := a.MintChecked(req)
	if err != nil {
		return errorResult(err.Error()), nil
	}
	s.notify(StatePending, token[:2*idBytes], ModeToken, c)
	return errorResult(InterceptionText(c.Entry.Name, token)), nil
}

// byElicitation asks the client's user to approve, in the call.
func (s approvalStage) byElicitation(ctx context.Context, c *router.Call, req Request) (*mcp.CallToolResult, error) {
	s.notify(StatePending, "", modeElicitation, c)
	if c.Task != nil {
		// The task waits for the user's answer meanwhile.
		defer c.Task.Hold(HeldText(c.Entry.Name, ""))()
	}
	res, err := elicitApproval(ctx, c, req)
	if res == nil && err == nil {
		s.notify(StateApproved, "", modeElicitation, c)
	} else {
		s.notify(StateDenied, "", modeElicitation, c)
	}
	return res, err
}

// byOperator files the request for the operator: an approved call runs,
// a denied one is refused, an undecided one is intercepted with the
// approval's id. A program's call (c.Run set) and a task's (c.Task set)
// wait for the decision.
func (s approvalStage) byOperator(ctx context.Context, c *router.Call, req Request, runOnce func(id, mode string) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	a := s.p.Approvals
	out, err := a.Ask(req)
	if err != nil {
		return errorResult(err.Error()), nil
	}
	if out.New {
		s.notify(StatePending, out.ID, ModeOperator, c)
	}
	if out.State == StatePending && (c.Run != "" || c.Task != nil) {
		// A program cannot retry once a human said yes: its call waits
		// for the decision, as long as the run may. The run is told what
		// it waits for, to say so should its time run out. So does a
		// task's, whose client polls for its end: the held task is
		// resumed by the approval.
		if c.Task != nil {
			defer c.Task.Hold(HeldText(c.Entry.Name, out.ID))()
		}
		waiting := out.ID
		router.ApprovalWait(ctx, c.Entry.Name, waiting, true)
		renewed := func(id string) {
			s.notify(StatePending, id, ModeOperator, c)
			router.ApprovalWait(ctx, c.Entry.Name, waiting, false)
			waiting = id
			router.ApprovalWait(ctx, c.Entry.Name, waiting, true)
		}
		out, err = awaitDecision(ctx, a, req, out, renewed)
		router.ApprovalWait(ctx, c.Entry.Name, waiting, false)
		if err != nil {
			return errorResult(err.Error()), nil
		}
	}
	switch out.State {
	case StateApproved:
		return runOnce(out.ID, ModeOperator)
	case StateDenied:
		s.notify(StateDenied, out.ID, ModeOperator, c)
		return errorResult(DeniedApprovalText(c.Entry.Name, out.ID)), nil
	}
	switch {
	case c.Run != "":
		return errorResult(UndecidedInRunText(c.Entry.Name, out.ID)), nil
	case c.Task != nil:
		return errorResult(UndecidedInTaskText(c.Entry.Name, out.ID)), nil
	}
	return errorResult(OperatorInterceptionText(c.Entry.Name, out.ID)), nil
}

// decisionPoll is how often a program's held call looks for its
// approval's decision (decisions.jsonl, or the shared store).
const decisionPoll = 200 * time.Millisecond

// awaitDecision waits until the approval of req is decided or ctx ends;
// it returns the approval as last seen. An approval that expires, is
// evicted or revoked meanwhile is asked again: renewed is told the new
// id, for the operator's records hold only the old one.
func awaitDecision(ctx context.Context, a *Approvals, req Request, out Outcome, renewed func(id string)) (Outcome, error) {
	t := time.NewTicker(decisionPoll)
	defer t.Stop()
	for out.State == StatePending {
		select {
		case <-ctx.Done():
			return out, nil
		case <-t.C:
		}
		var err error
		if out, err = a.Ask(req); err != nil {
			return out, err
		}
		if out.New {
			renewed(out.ID)
		}
	}
	return out, nil
}

// modeElicitation names approvals asked through the client in
// ApprovalEvent; modeInputRequired those asked by input_required.
const (
	modeElicitation   = "elicitation"
	modeInputRequired = "input_required"
)

// approvalInput is the id of the approval's elicitation among a result's
// input requests.
const approvalInput = "evokore_approval"

// relatedTaskKey is the _meta key of the task a request is made for.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// roundTrips reports whether the call's client speaks the sessionless
// protocol (MCP 2026-07-28) and declared, with this request, that it can
// ask its user: the router then cannot send it an elicitation request,
// and answers input_required instead.
func roundTrips(c *router.Call) bool {
	if c.Session == nil || c.Session.Peer == nil {
		return false
	}
	ip := c.Session.Peer.InitializeParams()
	return ip != nil && era.Sessionless(ip.ProtocolVersion) && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
}

// inputRequired asks for the approval in the call's answer: input_required
// with an elicitation, and a requestState that is an approval token
// (package doc: HMAC-bound to the caller's session, the tool, its
// definition and the canonical arguments, with an expiry; the key is
// shared by replicas that share approvals). The retry that carries the
// state and the user's accept runs the call once, whichever replica it
// reaches; a decline refuses it; a state that does not verify for this
// call, or was already used, refuses it too.
func (s approvalStage) inputRequired(c *router.Call, req Request, runOnce func(id, mode string) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	a := s.p.Approvals
	if in := c.Input; in != nil && in.State != "" {
		if rest, ok := strings.CutPrefix(in.State, continuationPrefix); ok {
			return s.continued(c, req, rest, runOnce)
		}
		id, state, err := a.Redeem(req.Binding, in.State)
		if err != nil {
			return errorResult(err.Error()), nil
		}
		if id == "" || state != StateApproved {
			return errorResult(StaleApprovalStateText(c.Entry.Name)), nil
		}
		answer, _ := in.Responses[approvalInput].(*mcp.ElicitResult)
		if answer == nil || answer.Action != "accept" {
			// Spent: a declined approval is not asked for again by replay.
			a.Consume(id)
			action := "cancel"
			if answer != nil {
				action = answer.Action
			}
			s.notify(StateDenied, id, modeInputRequired, c)
			return errorResult(DeclinedText(c.Entry.Name, action)), nil
		}
		// The state and the answer were the approval's: no child sees
		// them (a child's own input_required state is sealed apart).
		c.Input = nil
		return s.runApproved(c, req, id, runOnce)
	}
	token, err := a.MintChecked(req)
	if err != nil {
		return errorResult(err.Error()), nil
	}
	s.notify(StatePending, token[:2*idBytes], modeInputRequired, c)
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalInput: &mcp.ElicitParams{
			Mode:            "form",
			Message:         ElicitationText(c.Entry, req.Summary),
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
		}},
		RequestState: token,
	}, nil
}

// continuationPrefix marks the requestState of a child's input_required
// answered to a call that ran after an approval: a continuation token,
// then the child's own (sealed) state.
const continuationPrefix = "evokore-approved."

// continuation is the approval request a continuation is filed under: the
// call's binding and the child's state, so the token redeems only with
// that very state.
func continuation(req Request, childState string) Request {
	sum := sha256.Sum256([]byte(childState))
	req.Binding += "\x00continues\x00" + hex.EncodeToString(sum[:])
	return req
}

// runApproved runs an approved call once. When its child answers
// input_required, the child's state goes back wrapped in a continuation:
// a new approval, approved, single use, for this call and that state, so
// the retry carrying the child's answers runs once more without asking
// the user again, and a replay of it runs nothing.
func (s approvalStage) runApproved(c *router.Call, req Request, id string, runOnce func(id, mode string) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	c.AfterDispatch(func(res *mcp.CallToolResult) {
		if res.InputRequests == nil {
			return
		}
		token, err := s.p.Approvals.MintChecked(continuation(req, res.RequestState))
		if err != nil {
			*res = *errorResult(err.Error())
			return
		}
		res.RequestState = continuationPrefix + token + "." + res.RequestState
	})
	return runOnce(id, modeInputRequired)
}

// continued runs the retry of an approved call whose child asked for
// input, once: the continuation must be the one filed for this call and
// this child state, and unused.
func (s approvalStage) continued(c *router.Call, req Request, rest string, runOnce func(id, mode string) (*mcp.CallToolResult, error)) (*mcp.CallToolResult, error) {
	token, childState, _ := strings.Cut(rest, ".")
	id, state, err := s.p.Approvals.Redeem(continuation(req, childState).Binding, token)
	if err != nil {
		return errorResult(err.Error()), nil
	}
	if id == "" || state != StateApproved {
		return errorResult(StaleApprovalStateText(c.Entry.Name)), nil
	}
	// The child's answers go on, with its own state.
	c.Input.State = childState
	return s.runApproved(c, req, id, runOnce)
}

// canElicit reports whether the router may send the call's client an
// elicitation request: it declared it can, and does not speak the
// sessionless protocol (MCP 2026-07-28), which forbids a request to the
// client while its own is served; such a client's program call waits for
// the operator instead.
func canElicit(c *router.Call) bool {
	if c.Session == nil || c.Session.Peer == nil {
		return false
	}
	ip := c.Session.Peer.InitializeParams()
	return ip != nil && !era.Sessionless(ip.ProtocolVersion) && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil
}

// elicitApproval asks the user through the client. Accept runs the call;
// decline, cancel or a failed request refuse it.
func elicitApproval(ctx context.Context, c *router.Call, req Request) (*mcp.CallToolResult, error) {
	params := &mcp.ElicitParams{
		Mode:            "form",
		Message:         ElicitationText(c.Entry, req.Summary),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	}
	if c.Task != nil {
		// Every request a task's call makes says which task it is for
		// (MCP 2025-11-25 tasks).
		params.Meta = mcp.Meta{relatedTaskKey: map[string]string{"taskId": c.Task.ID()}}
	}
	res, err := c.Session.Peer.Elicit(ctx, params)
	if err != nil {
		return errorResult(ElicitationFailedText(c.Entry.Name, err)), nil
	}
	if res.Action == "accept" {
		return nil, nil
	}
	return errorResult(DeclinedText(c.Entry.Name, res.Action)), nil
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// takeToken removes the approval token from the arguments, however its
// key is escaped.
func takeToken(args json.RawMessage) (string, json.RawMessage) {
	if !bytes.Contains(args, []byte(TokenField)) && !bytes.Contains(args, []byte(`\u`)) {
		return "", args
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return "", args
	}
	raw, ok := m[TokenField]
	if !ok {
		return "", args
	}
	delete(m, TokenField)
	var token string
	_ = json.Unmarshal(raw, &token)
	out, err := json.Marshal(m)
	if err != nil {
		return token, args
	}
	return token, out
}

type rateLimitStage struct{ p *Policy }

func (s rateLimitStage) Check(ctx context.Context, c *router.Call) (*mcp.CallToolResult, error) {
	if c.Entry.Source != catalog.SourceProxy {
		return nil, nil
	}
	r := s.p.Rules()
	return nil, r.Limits.TakeContext(ctx, r.callerOf(c), c.Entry.Server, c.Entry.Original)
}

type cooldownStage struct{ p *Policy }

func (s cooldownStage) duration(server string) time.Duration {
	if d, ok := s.p.Rules().cooldown[server]; ok {
		return d
	}
	return s.p.fallback
}

func (s cooldownStage) Check(_ context.Context, c *router.Call) (*mcp.CallToolResult, error) {
	if c.Entry.Source != catalog.SourceProxy || s.duration(c.Entry.Server) <= 0 {
		return nil, nil
	}
	return s.p.Cooldowns.Check(s.p.Rules().callerOf(c), c.Entry.Name, c.Args), nil
}

// Observe starts a cooldown after a proxied call fails.
func (s cooldownStage) Observe(ctx context.Context, o router.Outcome) {
	c := o.Call
	if o.Refused || c.Entry.Source != catalog.SourceProxy || ctx.Err() != nil {
		return // a call the client cancelled did not fail
	}
	if waitsForUser(o.Err) {
		// The child asked the user to authorize it (URL elicitation):
		// the call did not fail, and its retry must not be held.
		return
	}
	if o.Err != nil || (o.Result != nil && o.Result.IsError) {
		s.p.Cooldowns.Fail(s.p.Rules().callerOf(c), c.Entry.Name, c.Args, s.duration(c.Entry.Server))
	}
}

// waitsForUser reports whether err asks the client to send the user to
// a URL before the call is made again (-32042).
func waitsForUser(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == mcp.CodeURLElicitationRequired
}

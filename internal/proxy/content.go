package proxy

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/evokore/evokore/internal/era"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

// A child's prompts, resources and resource templates are proxied next to
// its tools. Prompt names get the server's prefix, as tool names do;
// resource URIs are the child's own, because a URI is an address the
// child must recognise when it is read back (and clients show, bookmark
// and subscribe to it). A URI or prompt name two children both serve goes
// to the first in config order, as tool names do.
//
// What a session may see of them is not decided here (the proxy makes no
// policy decisions): every item says which server it belongs to, and the
// server package filters by the session's role.

// ChildPrompt is a child's prompt as clients see it: Prompt.Name carries
// the server's prefix.
type ChildPrompt struct {
	Server string
	Prompt *mcp.Prompt
}

// ChildResource is a child's resource; its URI is the child's own.
type ChildResource struct {
	Server   string
	Resource *mcp.Resource
}

// ChildTemplate is a child's resource template.
type ChildTemplate struct {
	Server   string
	Template *mcp.ResourceTemplate
}

// childContent is what one connected child serves besides tools.
type childContent struct {
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
	// matchers are the templates parsed, in templates' order; a template
	// that does not parse matches nothing.
	matchers []*uritemplate.Template
	// skills are what the child lists by the Skills Extension (skills.go).
	skills []childSkill
}

// contentState is the supervisor's record of every child's content and of
// the subscriptions sessions hold on children's resources.
type contentState struct {
	mu sync.Mutex
	by map[string]*childContent
	// changed is closed and replaced whenever a child's lists change.
	changed chan struct{}
	// subs are the sessions subscribed to each URI, per server: the child
	// is subscribed once, while at least one session is.
	subs map[string]map[string]map[*session.Session]bool
	// reloading coalesces list_changed announcements per child.
	reloading sync.Map // server id -> *atomic.Bool
}

func (cs *contentState) init() {
	cs.by = map[string]*childContent{}
	cs.changed = make(chan struct{})
	cs.subs = map[string]map[string]map[*session.Session]bool{}
}

// ContentChanged is closed the next time a child's prompts, resources or
// templates change (a boot, a death, a list_changed announcement).
func (s *Supervisor) ContentChanged() <-chan struct{} {
	s.content.mu.Lock()
	defer s.content.mu.Unlock()
	return s.content.changed
}

func (s *Supervisor) setContent(id string, cc *childContent) {
	s.content.mu.Lock()
	if cc == nil {
		if _, had := s.content.by[id]; !had {
			s.content.mu.Unlock()
			return
		}
		delete(s.content.by, id)
	} else {
		s.content.by[id] = cc
	}
	close(s.content.changed)
	s.content.changed = make(chan struct{})
	s.content.mu.Unlock()
}

// contentHandlers adds to a child's client options the handlers that keep
// its content current and pass resource updates on.
func (s *Supervisor) contentHandlers(c *child, opts *mcp.ClientOptions) {
	opts.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) { s.requestContentReload(c) }
	opts.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) { s.requestContentReload(c) }
	opts.ResourceUpdatedHandler = func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		if req.Params == nil || s.opts.ResourceUpdated == nil {
			return
		}
		// Only a URI some session subscribed to at this child is passed
		// on: a child cannot make the router notify about another's.
		s.content.mu.Lock()
		n := len(s.content.subs[c.spec.ID][req.Params.URI])
		s.content.mu.Unlock()
		if n == 0 {
			return
		}
		p := *req.Params
		s.opts.ResourceUpdated(context.WithoutCancel(ctx), &p)
	}
}

// requestContentReload re-reads a child's lists after it announced a
// change; announcements arriving while one re-read waits cost nothing.
func (s *Supervisor) requestContentReload(c *child) {
	v, _ := s.content.reloading.LoadOrStore(c.spec.ID, new(atomic.Bool))
	pending := v.(*atomic.Bool)
	if pending.Swap(true) {
		return
	}
	go func() {
		pending.Store(false)
		if cs := c.clientSession(); cs != nil {
			s.loadContent(c, cs)
		}
	}()
}

// loadContent lists what a connected child serves besides tools, as its
// capabilities declare. A list that fails is logged and left empty: the
// child's tools still serve.
func (s *Supervisor) loadContent(c *child, cs *mcp.ClientSession) {
	if c.inst != nil {
		return // the template's prompts and resources are listed
	}
	ir := cs.InitializeResult()
	if ir == nil || ir.Capabilities == nil {
		s.setContent(c.spec.ID, &childContent{})
		return
	}
	caps := ir.Capabilities
	ctx, cancel := context.WithTimeout(s.ctx, s.bootTimeout(c.spec))
	defer cancel()
	cc := &childContent{}
	var problems []string
	if caps.Prompts != nil {
		prompts, err := collect(ctx, "prompts", promptPages(cs))
		if err != nil {
			problems = append(problems, err.Error())
		}
		for _, p := range prompts {
			if p != nil && p.Name != "" {
				cc.prompts = append(cc.prompts, p)
			}
		}
	}
	if caps.Resources != nil {
		resources, err := collect(ctx, "resources", resourcePages(cs))
		if err != nil {
			problems = append(problems, err.Error())
		}
		for _, r := range resources {
			if r == nil || r.URI == "" {
				continue
			}
			// A URI that does not parse could not be read back, and the
			// session registries that announce changes refuse it.
			if _, perr := url.Parse(r.URI); perr != nil {
				problems = append(problems, "resource URI "+strconv.Quote(r.URI)+" does not parse")
				continue
			}
			cc.resources = append(cc.resources, r)
		}
		templates, err := collect(ctx, "resource templates", templatePages(cs))
		if err != nil {
			problems = append(problems, err.Error())
		}
		for _, t := range templates {
			if t == nil || t.URITemplate == "" {
				continue
			}
			m, perr := uritemplate.New(t.URITemplate)
			if perr != nil {
				m = nil
			}
			cc.templates = append(cc.templates, t)
			cc.matchers = append(cc.matchers, m)
		}
	}
	if offersSkills(caps) {
		var more []string
		cc.skills, more = s.listChildSkills(ctx, c, cs)
		problems = append(problems, more...)
	}
	if len(problems) > 0 {
		s.log.Info("[EVOKORE] Cannot list the prompts or resources of a server", "server", c.spec.ID, "err", c.redact.Replace(strings.Join(problems, "; ")))
	}
	s.setContent(c.spec.ID, cc)
	s.resubscribe(c, cs)
}

// resubscribe subscribes a (re)connected child to the URIs sessions hold
// subscriptions on, so a restart does not silently end them.
func (s *Supervisor) resubscribe(c *child, cs *mcp.ClientSession) {
	s.content.mu.Lock()
	var uris []string
	for uri, sessions := range s.content.subs[c.spec.ID] {
		if len(sessions) > 0 {
			uris = append(uris, uri)
		}
	}
	s.content.mu.Unlock()
	for _, uri := range uris {
		ctx, cancel := context.WithTimeout(s.ctx, s.requestTimeout(c.spec))
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			s.log.Info("[EVOKORE] Cannot renew a resource subscription", "uri", uri, "server", c.spec.ID, "err", c.redact.Replace(err.Error()))
		}
		cancel()
	}
}

// Prompts lists the children's prompts in config order, names prefixed; a
// name an earlier server already lists is left out.
func (s *Supervisor) Prompts() []ChildPrompt {
	s.content.mu.Lock()
	defer s.content.mu.Unlock()
	var out []ChildPrompt
	seen := map[string]bool{}
	for _, c := range s.children() {
		cc := s.content.by[c.spec.ID]
		if cc == nil {
			continue
		}
		for _, p := range cc.prompts {
			cp := *p
			cp.Name = c.spec.PublicName(p.Name)
			if seen[cp.Name] {
				continue
			}
			seen[cp.Name] = true
			out = append(out, ChildPrompt{Server: c.spec.ID, Prompt: &cp})
		}
	}
	return out
}

// Resources lists the children's resources in config order; a URI an
// earlier server already lists is left out.
func (s *Supervisor) Resources() []ChildResource {
	s.content.mu.Lock()
	defer s.content.mu.Unlock()
	var out []ChildResource
	seen := map[string]bool{}
	for _, c := range s.children() {
		cc := s.content.by[c.spec.ID]
		if cc == nil {
			continue
		}
		for _, r := range cc.resources {
			if seen[r.URI] {
				continue
			}
			seen[r.URI] = true
			out = append(out, ChildResource{Server: c.spec.ID, Resource: r})
		}
	}
	return out
}

// ResourceTemplates lists the children's resource templates in config
// order.
func (s *Supervisor) ResourceTemplates() []ChildTemplate {
	s.content.mu.Lock()
	defer s.content.mu.Unlock()
	var out []ChildTemplate
	seen := map[string]bool{}
	for _, c := range s.children() {
		cc := s.content.by[c.spec.ID]
		if cc == nil {
			continue
		}
		for _, t := range cc.templates {
			if seen[t.URITemplate] {
				continue
			}
			seen[t.URITemplate] = true
			out = append(out, ChildTemplate{Server: c.spec.ID, Template: t})
		}
	}
	return out
}

// PromptOwner is the server serving the prompt clients know as name, and
// the child's own name for it; ok is false when no child serves it.
func (s *Supervisor) PromptOwner(name string) (server, original string, ok bool) {
	for _, p := range s.Prompts() {
		if p.Prompt.Name == name {
			c, ok := s.child(p.Server)
			if !ok {
				return "", "", false
			}
			return p.Server, strings.TrimPrefix(name, c.spec.NamePrefix()), true
		}
	}
	return "", "", false
}

// ResourceOwner is the server a URI is read from: the first to list the
// URI itself, else the first with a template the URI matches.
func (s *Supervisor) ResourceOwner(uri string) (server string, ok bool) {
	s.content.mu.Lock()
	defer s.content.mu.Unlock()
	for _, c := range s.children() {
		if cc := s.content.by[c.spec.ID]; cc != nil {
			for _, r := range cc.resources {
				if r.URI == uri {
					return c.spec.ID, true
				}
			}
		}
	}
	for _, c := range s.children() {
		if cc := s.content.by[c.spec.ID]; cc != nil {
			for _, m := range cc.matchers {
				if m != nil && m.Regexp().MatchString(uri) {
					return c.spec.ID, true
				}
			}
		}
	}
	return "", false
}

// TemplateOwner is the server that lists a resource template (or a
// resource) under uri, for completions of its arguments.
func (s *Supervisor) TemplateOwner(uri string) (server string, ok bool) {
	s.content.mu.Lock()
	for _, c := range s.children() {
		if cc := s.content.by[c.spec.ID]; cc != nil {
			for _, t := range cc.templates {
				if t.URITemplate == uri {
					s.content.mu.Unlock()
					return c.spec.ID, true
				}
			}
		}
	}
	s.content.mu.Unlock()
	return s.ResourceOwner(uri)
}

// GetPrompt renders a child's prompt for sess; p names the child's own
// prompt, and carries a caller's answers to its input_required (era.go).
func (s *Supervisor) GetPrompt(ctx context.Context, server string, sess *session.Session, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	what := "the prompt '" + p.Name + "'"
	binding := contentBinding(sess, "prompts/get", []any{p.Name, p.Arguments})
	return forwardContent(s, ctx, server, sess, func(ctx context.Context, ch *child, k *conn) (*mcp.GetPromptResult, error) {
		return askContent(ctx, s, ch, sess, binding, what, input(p.InputResponses, p.RequestState), exchange[*mcp.GetPromptResult]{
			send: func(ctx context.Context, responses mcp.InputResponseMap, state string) (*mcp.GetPromptResult, mcp.InputRequestMap, string, error) {
				res, err := k.cs.GetPrompt(ctx, &mcp.GetPromptParams{Meta: requestMeta(k, sess, nil), Name: p.Name, Arguments: p.Arguments, InputResponses: responses, RequestState: state})
				if err != nil {
					return nil, nil, "", err
				}
				delete(res.Meta, mcp.MetaKeyServerInfo)
				return res, res.InputRequests, res.RequestState, nil
			},
			pass: func(reqs mcp.InputRequestMap, state string) *mcp.GetPromptResult {
				return &mcp.GetPromptResult{InputRequests: reqs, RequestState: state}
			},
		})
	})
}

// ReadResource reads a child's resource for sess; p carries a caller's
// answers to its input_required (era.go).
func (s *Supervisor) ReadResource(ctx context.Context, server string, sess *session.Session, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	what := "the resource " + p.URI
	binding := contentBinding(sess, "resources/read", p.URI)
	return forwardContent(s, ctx, server, sess, func(ctx context.Context, ch *child, k *conn) (*mcp.ReadResourceResult, error) {
		return askContent(ctx, s, ch, sess, binding, what, input(p.InputResponses, p.RequestState), exchange[*mcp.ReadResourceResult]{
			send: func(ctx context.Context, responses mcp.InputResponseMap, state string) (*mcp.ReadResourceResult, mcp.InputRequestMap, string, error) {
				res, err := k.cs.ReadResource(ctx, &mcp.ReadResourceParams{Meta: requestMeta(k, sess, nil), URI: p.URI, InputResponses: responses, RequestState: state})
				if err != nil {
					return nil, nil, "", err
				}
				delete(res.Meta, mcp.MetaKeyServerInfo)
				return res, res.InputRequests, res.RequestState, nil
			},
			pass: func(reqs mcp.InputRequestMap, state string) *mcp.ReadResourceResult {
				return &mcp.ReadResourceResult{InputRequests: reqs, RequestState: state}
			},
		})
	})
}

// askContent runs a prompts/get or resources/read that may answer
// input_required (roundTrip): a retry's sealed state is opened for this
// request to this child only, and a failure of the rounds is the
// request's error.
func askContent[R any](ctx context.Context, s *Supervisor, ch *child, sess *session.Session, binding, what string, in *router.Input, x exchange[R]) (R, error) {
	var zero R
	responses, state, err := s.openInput(in, ch.spec.ID, binding, func() string { return what })
	if err != nil {
		return zero, err
	}
	x.sess, x.binding = sess, binding
	x.names = func() (string, string) { return what, "to answer " + what }
	res, reqs, inner, err := x.send(ctx, responses, state)
	if err == nil && reqs != nil {
		res, err = roundTrip(ctx, s, ch, x, reqs, inner)
	}
	var failed *inputFailure
	if errors.As(err, &failed) {
		return zero, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: failed.msg}
	}
	return res, err
}

// input is a retry's answers to input_required; nil for a first request.
func input(responses mcp.InputResponseMap, state string) *router.Input {
	if responses == nil && state == "" {
		return nil
	}
	return &router.Input{State: state, Responses: responses}
}

// Complete forwards a completion request; params refer to the child's own
// prompt name or template URI.
func (s *Supervisor) Complete(ctx context.Context, server string, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return forwardContent(s, ctx, server, nil, func(ctx context.Context, _ *child, k *conn) (*mcp.CompleteResult, error) {
		return k.cs.Complete(ctx, params)
	})
}

// Subscribe records sess's subscription to uri at server; the child is
// subscribed when the first session subscribes.
func (s *Supervisor) Subscribe(ctx context.Context, server string, sess *session.Session, uri string) error {
	s.content.mu.Lock()
	bySrv := s.content.subs[server]
	if bySrv == nil {
		bySrv = map[string]map[*session.Session]bool{}
		s.content.subs[server] = bySrv
	}
	first := len(bySrv[uri]) == 0
	s.content.mu.Unlock()
	if first {
		_, err := forwardContent(s, ctx, server, nil, func(ctx context.Context, c *child, k *conn) (struct{}, error) {
			if err := k.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
				return struct{}{}, err
			}
			if err := c.onSecond(func(cs *mcp.ClientSession) error { return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}) }); err != nil {
				s.log.Info("[EVOKORE] Cannot subscribe a server's "+era.SessionlessVersion+" connection to a resource", "uri", uri, "server", server, "err", c.redact.Replace(err.Error()))
			}
			return struct{}{}, nil
		})
		if err != nil {
			return err
		}
	}
	s.content.mu.Lock()
	if bySrv[uri] == nil {
		bySrv[uri] = map[*session.Session]bool{}
	}
	bySrv[uri][sess] = true
	s.content.mu.Unlock()
	return nil
}

// Unsubscribe ends sess's subscription to uri; the child is unsubscribed
// when no session is subscribed any more.
func (s *Supervisor) Unsubscribe(ctx context.Context, sess *session.Session, uri string) error {
	for _, server := range s.drop(sess, uri) {
		_, err := forwardContent(s, ctx, server, nil, func(ctx context.Context, c *child, k *conn) (struct{}, error) {
			_ = c.onSecond(func(cs *mcp.ClientSession) error { return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}) })
			return struct{}{}, k.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// DropSession ends every subscription of a session that went away.
func (s *Supervisor) DropSession(sess *session.Session) {
	s.content.mu.Lock()
	type sub struct{ server, uri string }
	var last []sub
	for server, byURI := range s.content.subs {
		for uri, sessions := range byURI {
			if sessions[sess] {
				delete(sessions, sess)
				if len(sessions) == 0 {
					delete(byURI, uri)
					last = append(last, sub{server, uri})
				}
			}
		}
	}
	s.content.mu.Unlock()
	for _, u := range last {
		ctx, cancel := context.WithTimeout(s.ctx, time.Second)
		c, ok := s.child(u.server)
		if !ok {
			cancel()
			continue
		}
		unsubscribe := func(cs *mcp.ClientSession) error { return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: u.uri}) }
		if cs := c.clientSession(); cs != nil {
			_ = unsubscribe(cs)
		}
		_ = c.onSecond(unsubscribe)
		cancel()
	}
}

// drop removes sess's subscription to uri wherever it is held and returns
// the servers no session is subscribed at any more.
func (s *Supervisor) drop(sess *session.Session, uri string) []string {
	s.content.mu.Lock()
	defer s.content.mu.Unlock()
	var last []string
	for server, byURI := range s.content.subs {
		if sessions := byURI[uri]; sessions[sess] {
			delete(sessions, sess)
			if len(sessions) == 0 {
				delete(byURI, uri)
				last = append(last, server)
			}
		}
	}
	return last
}

// forwardContent sends one request to a child through the SDK's client,
// waiting for a boot in progress and bounded by the server's request
// timeout; a request of sess goes to the connection of its era
// (connFor), nil sess's to the child's own. An error the child returned keeps its JSON-RPC code; a
// dead connection is noticed at once.
func forwardContent[R any](s *Supervisor, ctx context.Context, server string, sess *session.Session, do func(context.Context, *child, *conn) (R, error)) (R, error) {
	var zero R
	c, ok := s.child(server)
	if !ok {
		return zero, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no server '" + server + "' is configured"}
	}
	k, err := c.connFor(ctx, sess)
	if err != nil {
		return zero, err
	}
	if sess != nil {
		// What the child asks while it answers (an elicitation, roots)
		// belongs to this caller, as during a call.
		_, end := s.routes.begin(ctx, server, sess, nil)
		defer end()
	}
	timeout := s.requestTimeout(c.spec)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := do(cctx, c, k)
	c.recordCall(err)
	if err == nil {
		return res, nil
	}
	var we *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		return zero, ctx.Err()
	case cctx.Err() == context.DeadlineExceeded:
		return zero, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server '" + server + "' did not answer within " + timeout.String()}
	case errors.As(err, &we):
		return zero, we
	case errors.Is(err, mcp.ErrConnectionClosed) || c.connectionLost():
		c.lost(k)
		return zero, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: MsgReconnecting(server)}
	}
	return zero, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: c.redact.Replace(err.Error())}
}

package server

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/audit"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/events"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/redact"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/sessionrecord"
	"github.com/evokore/evokore/internal/tracing"
	"github.com/evokore/evokore/internal/webhook"
)

// records are what the router tells operators about itself: the event
// bus and its sinks (the audit log, webhooks), and the session recorder.
// Everything recorded passes the scrubber first.
type records struct {
	bus      *events.Bus
	scrub    *redact.Scrubber
	audit    *audit.Log
	webhooks *webhook.Sender
	sessions *sessionrecord.Recorder
}

// detailLimit bounds the free text of an event.
const detailLimit = 300

// webhookGrace is how long shutdown waits for queued webhook posts.
const webhookGrace = 2 * time.Second

// openRecords builds the scrubber from every secret the config knows and
// starts the sinks the settings turn on. It runs before the policy and
// the supervisor are built, which report into it. Its webhooks are
// those of the config the router starts with; a reload adds its servers'
// secrets to the scrubber (learnSecrets).
func (s *Server) openRecords(cfg *config.MCPConfig) {
	set := s.opts.Settings
	var reps [][]string
	for _, srv := range cfg.Servers {
		reps = append(reps, srv.RedactPairs(set.Env))
	}
	var hooks []config.Webhook
	var literals []string
	for i, w := range cfg.Webhooks {
		r, err := w.Resolve(set.Env)
		if err != nil {
			s.log.Info(fmt.Sprintf("[EVOKORE] Ignoring webhook %d: %v", i, err))
			continue
		}
		literals = append(literals, r.Secret)
		hooks = append(hooks, r)
	}
	r := &records{bus: events.NewBus(nil, os.Getpid()), scrub: redact.NewScrubber(reps, literals...)}
	s.records = r
	if set.AuditLog {
		r.audit = audit.Open(audit.Options{Path: audit.Path(set.Home), MaxBytes: set.AuditMaxBytes, Keep: set.AuditKeep, Log: s.log})
		r.bus.Add(r.audit)
		s.closers = append(s.closers, r.audit.Close)
	}
	switch {
	case len(hooks) == 0:
	case !set.Webhooks:
		s.log.Info("[EVOKORE] Webhooks are configured but EVOKORE_WEBHOOKS_ENABLED=false: none are posted.")
	case set.UntrustedConfig:
		// A project's own config must not send what the router sees to a
		// URL of its choosing.
		s.log.Info(fmt.Sprintf("[EVOKORE] Ignoring the webhooks of %s: the project directory is not trusted. Run 'evokore trust' there to honour them.", cfg.File))
	default:
		r.webhooks = webhook.New(webhook.Options{Hooks: hooks, AllowPrivate: set.WebhooksAllowPrivate, Log: s.log})
		r.bus.Add(r.webhooks)
		s.closers = append(s.closers, func() {
			ctx, cancel := context.WithTimeout(context.Background(), webhookGrace)
			defer cancel()
			r.webhooks.Close(ctx)
		})
	}
	if set.SessionReplay {
		r.sessions = sessionrecord.New(set.Home, r.scrub, s.log)
		s.closers = append(s.closers, r.sessions.Close)
	}

	tel, err := tracing.New(tracing.Options{Version: s.opts.Version, Log: s.log})
	if err != nil {
		s.log.Info(fmt.Sprintf("[EVOKORE] OpenTelemetry export is off: %v", err))
	}
	if tel != nil {
		s.tracing = tel
		s.closers = append(s.closers, func() {
			ctx, cancel := context.WithTimeout(context.Background(), webhookGrace)
			defer cancel()
			if err := tel.Shutdown(ctx); err != nil {
				s.log.Info(fmt.Sprintf("[EVOKORE] OpenTelemetry export at shutdown failed: %v", s.records.scrub.String(err.Error())))
			}
		})
	}
}

// tracedProxy is the child supervisor with each upstream call in its own
// span; the supervisor's other methods (Resolve) pass through.
type tracedProxy struct {
	*proxy.Supervisor
	tel *tracing.Exporter
}

func (p tracedProxy) CallTool(ctx context.Context, c *router.Call) (*mcp.CallToolResult, error) {
	return p.tel.Upstream(ctx, c, func(ctx context.Context) (*mcp.CallToolResult, error) { return p.Supervisor.CallTool(ctx, c) })
}

// recorders are what the pipeline tells the records about each call,
// after the call is answered.
func (r *records) recorders(s *Server) []router.Observer {
	out := []router.Observer{callEvents{s}}
	if r.sessions != nil {
		out = append(out, r.sessions)
	}
	return out
}

// Events returns the bus the router's events go through, for parts that
// report from outside the pipeline.
func (s *Server) Events() *events.Bus { return s.records.bus }

// learnSecrets teaches the scrubber the env placeholder values of a
// reloaded config's servers, so a server a reload adds is redacted like
// one the router started with.
func (r *records) learnSecrets(cfg *config.MCPConfig, env config.Env) {
	reps := make([][]string, 0, len(cfg.Servers))
	for _, srv := range cfg.Servers {
		reps = append(reps, srv.RedactPairs(env))
	}
	r.scrub.Extend(reps...)
}

// RecordReload records a reload of the router's configuration: what was
// reloaded (a short summary) and the error that stopped it, if any.
func (s *Server) RecordReload(summary string, err error) {
	e := events.Event{Type: events.Reload, Outcome: events.OutcomeOK, Detail: s.detail(summary)}
	if err != nil {
		e.Outcome = events.OutcomeError
		e.Detail = s.detail(strings.TrimSpace(summary + ": " + err.Error()))
	}
	s.records.bus.Emit(e)
}

// RecordAuthFailure records a request the HTTP transport refused for its
// credentials: the client's address and why (never the credential).
func (s *Server) RecordAuthFailure(remote, reason string) {
	s.records.bus.Emit(events.Event{Type: events.AuthFailure, Transport: "http", Remote: remote,
		Outcome: events.OutcomeRefused, Detail: s.detail(reason)})
}

func (s *Server) detail(text string) string {
	return s.records.scrub.Bounded(text, detailLimit)
}

// sessionEvent records a session starting or ending, with its role.
func (s *Server) sessionEvent(t events.Type, sess *session.Session, client string) {
	s.records.bus.Emit(events.Event{Type: t, Session: sess.ID, Role: sess.Role, Transport: transportOf(sess),
		Client: s.detail(client)})
}

func transportOf(sess *session.Session) string {
	if strings.HasPrefix(sess.ID, "stdio-") {
		return "stdio"
	}
	return "http"
}

// approvalEvent records a step of an approval.
func (s *Server) approvalEvent(a policy.ApprovalEvent) {
	t := events.ApprovalRequested
	switch a.Kind {
	case policy.StateApproved:
		t = events.ApprovalGranted
	case policy.StateDenied:
		t = events.ApprovalDenied
	}
	e := events.Event{Type: t, Session: a.Session, Tool: a.Tool, Approval: a.ID, Mode: a.Mode}
	for _, v := range s.Sessions() {
		if v.ID == a.Session {
			e.Role = v.Role
		}
	}
	s.records.bus.Emit(e)
}

// quarantinePinner tells the records about every tool the pins hold,
// once per held tool and reason.
type quarantinePinner struct {
	next proxy.Pinner
	s    *Server
	mu   sync.Mutex
	seen map[string]string
}

func (q *quarantinePinner) Check(srv config.Server, tools []*mcp.Tool) (map[string]string, string) {
	held, problem := q.next.Check(srv, tools)
	q.mu.Lock()
	var fresh []string
	for _, name := range slices.Sorted(maps.Keys(held)) {
		key := srv.ID + "\x00" + name
		if q.seen[key] != held[name] {
			q.seen[key] = held[name]
			fresh = append(fresh, name)
		}
	}
	q.mu.Unlock()
	for _, name := range fresh {
		q.s.records.bus.Emit(events.Event{Type: events.Quarantine, Server: srv.ID, Tool: srv.ID + "_" + name,
			Source: "proxy", Detail: q.s.detail(held[name])})
	}
	return held, problem
}

// callEvents turns every call into a tool_call event (and a tool_error
// one when it failed).
type callEvents struct{ s *Server }

var (
	_ router.Observer        = callEvents{}
	_ router.RefusalObserver = callEvents{}
)

func (o callEvents) Observe(_ context.Context, c *router.Call, res *mcp.CallToolResult, err error) {
	if !o.s.records.bus.Listening() {
		return
	}
	ms := float64(time.Since(c.Started).Microseconds()) / 1000
	e := o.event(c)
	e.LatencyMs = &ms
	e.Outcome = events.OutcomeOK
	switch {
	case err != nil:
		e.Outcome, e.Detail = events.OutcomeError, o.detail(c, err.Error())
	case res != nil && res.IsError:
		e.Outcome, e.Detail = events.OutcomeError, o.detail(c, c.ResultText(res))
	}
	o.s.records.bus.Emit(e)
	if e.Outcome == events.OutcomeError {
		e.Type = events.ToolError
		o.s.records.bus.Emit(e)
	}
}

func (o callEvents) Refused(_ context.Context, c *router.Call, res *mcp.CallToolResult, err error) {
	if !o.s.records.bus.Listening() {
		return
	}
	e := o.event(c)
	e.Outcome = events.OutcomeRefused
	if err != nil {
		e.Detail = o.detail(c, err.Error())
	} else if res != nil {
		e.Detail = o.detail(c, c.ResultText(res))
	}
	o.s.records.bus.Emit(e)
}

// detail is a call's answer as an event shows it: scrubbed of the
// config's secrets and of the call's own secret arguments, bounded.
func (o callEvents) detail(c *router.Call, text string) string {
	return o.s.records.scrub.Call(c, c.Args).Scrubber.Bounded(text, detailLimit)
}

func (o callEvents) event(c *router.Call) events.Event {
	e := events.Event{Type: events.ToolCall, Tool: c.Entry.Name, Server: c.Entry.Server, Source: c.Entry.Source.String()}
	// No arguments are left out of the event, as an empty map was.
	if a := o.s.records.scrub.Call(c, c.Args).Redacted; string(a) != "{}" {
		e.Args = a
	}
	if c.Session != nil {
		e.Session, e.Role, e.Transport = c.Session.ID, c.Session.Role, transportOf(c.Session)
	}
	return e
}

// Package records is what the router tells operators about itself: the
// event bus and its sinks (the audit log, webhooks) and the session
// recorder, fed by one router.Observer for calls and by methods for
// everything else (sessions, approvals, quarantines, reloads, auth
// failures). Everything recorded passes the scrubber first: a sink never
// sees a secret the configuration knows, nor a call's secret arguments.
//
// Open builds the sinks the settings turn on and starts nothing: the
// sinks take their queues and goroutines with their first record. Close
// drains and stops them.
package records

import (
	"context"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/audit"
	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/events"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/redact"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/sessionrecord"
	"github.com/evokore/evokore/internal/skills"
	"github.com/evokore/evokore/internal/webhook"
)

// detailLimit bounds the free text of an event.
const detailLimit = 300

// webhookGrace is how long Close waits for queued webhook posts.
const webhookGrace = 2 * time.Second

// Options say which records to keep.
type Options struct {
	Settings Settings
	// Home holds the audit log and the session records.
	Home string
	// Env resolves the servers' and webhooks' secrets.
	Env config.Env
	// UntrustedConfig says Config is a project directory's own, not
	// trusted: its webhooks are not posted to.
	UntrustedConfig bool
	// Config is the configuration the router starts with: its servers'
	// secrets are scrubbed, its webhooks posted to.
	Config *config.MCPConfig
	Log    *slog.Logger
}

// Records are the router's records.
type Records struct {
	log      *slog.Logger
	bus      *events.Bus
	scrub    *redact.Scrubber
	audit    *audit.Log
	webhooks *webhook.Sender
	sessions *sessionrecord.Recorder
}

// Open builds the scrubber from every secret the config knows and the
// sinks the settings turn on.
func Open(o Options) *Records {
	set, cfg := o.Settings, o.Config
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	var reps [][]string
	for _, srv := range cfg.Servers {
		reps = append(reps, srv.RedactPairs(o.Env))
	}
	var hooks []config.Webhook
	var literals []string
	for i, w := range cfg.Webhooks {
		r, err := w.Resolve(o.Env)
		if err != nil {
			o.Log.Info("[EVOKORE] Ignoring a webhook", "index", i, "err", err)
			continue
		}
		literals = append(literals, r.Secret)
		hooks = append(hooks, r)
	}
	r := &Records{log: o.Log, bus: events.NewBus(nil, os.Getpid()), scrub: redact.NewScrubber(reps, literals...)}
	if set.AuditLog {
		r.audit = audit.Open(audit.Options{Path: audit.Path(o.Home), MaxBytes: set.AuditMaxBytes, Keep: set.AuditKeep, Log: o.Log})
		r.bus.Add(r.audit)
	}
	switch {
	case len(hooks) == 0:
	case !set.Webhooks:
		o.Log.Info("[EVOKORE] Webhooks are configured but EVOKORE_WEBHOOKS_ENABLED=false: none are posted.")
	case o.UntrustedConfig:
		// A project's own config must not send what the router sees to a
		// URL of its choosing.
		o.Log.Info("[EVOKORE] Ignoring the webhooks of an untrusted project directory. Run 'evokore trust' there to honour them.", "config", cfg.File)
	default:
		r.webhooks = webhook.New(webhook.Options{Hooks: hooks, AllowPrivate: set.WebhooksAllowPrivate, Log: o.Log})
		r.bus.Add(r.webhooks)
	}
	if set.SessionReplay {
		r.sessions = sessionrecord.New(o.Home, r.scrub, o.Log)
	}
	return r
}

// Close writes what is queued and stops the sinks; webhooks get
// webhookGrace to post theirs.
func (r *Records) Close() {
	if r.sessions != nil {
		r.sessions.Close()
	}
	if r.webhooks != nil {
		ctx, cancel := context.WithTimeout(context.Background(), webhookGrace)
		r.webhooks.Close(ctx)
		cancel()
	}
	if r.audit != nil {
		r.audit.Close()
	}
}

// Observers are what the pipeline tells the records about each call.
func (r *Records) Observers() []router.Observer {
	out := []router.Observer{callEvents{r}}
	if r.sessions != nil {
		out = append(out, r.sessions)
	}
	return out
}

// Events returns the bus the router's events go through, for parts that
// report from outside the pipeline.
func (r *Records) Events() *events.Bus { return r.bus }

// Scrub returns text with every secret the configuration knows redacted.
func (r *Records) Scrub(text string) string { return r.scrub.String(text) }

// LearnSecrets teaches the scrubber the env placeholder values of a
// reloaded config's servers, so a server a reload adds is redacted like
// one the router started with.
func (r *Records) LearnSecrets(cfg *config.MCPConfig, env config.Env) {
	reps := make([][]string, 0, len(cfg.Servers))
	for _, srv := range cfg.Servers {
		reps = append(reps, srv.RedactPairs(env))
	}
	r.scrub.Extend(reps...)
}

// Reload records a reload of the router's configuration: what was
// reloaded (a short summary) and the error that stopped it, if any.
func (r *Records) Reload(summary string, err error) {
	e := events.Event{Type: events.Reload, Outcome: events.OutcomeOK, Detail: r.detail(summary)}
	if err != nil {
		e.Outcome = events.OutcomeError
		e.Detail = r.detail(strings.TrimSpace(summary + ": " + err.Error()))
	}
	r.bus.Emit(e)
}

// AuthFailure records a request the HTTP transport refused for its
// credentials: the client's address and why (never the credential).
func (r *Records) AuthFailure(remote, reason string) {
	r.bus.Emit(events.Event{Type: events.AuthFailure, Transport: "http", Remote: remote,
		Outcome: events.OutcomeRefused, Detail: r.detail(reason)})
}

func (r *Records) detail(text string) string {
	return r.scrub.Bounded(text, detailLimit)
}

// Session records a session starting or ending, with its role.
func (r *Records) Session(t events.Type, sess *session.Session, client string) {
	r.bus.Emit(events.Event{Type: t, Session: sess.ID, Tenant: sess.Identity.Tenant, Role: sess.Role, Transport: transportOf(sess),
		Client: r.detail(client)})
}

func transportOf(sess *session.Session) string {
	if strings.HasPrefix(sess.ID, "stdio-") {
		return "stdio"
	}
	return "http"
}

// Approval records a step of an approval; role is the role of the
// session that asked, when it is known.
func (r *Records) Approval(a policy.ApprovalEvent, role string) {
	t := events.ApprovalRequested
	switch a.Kind {
	case policy.StateApproved:
		t = events.ApprovalGranted
	case policy.StateDenied:
		t = events.ApprovalDenied
	}
	r.bus.Emit(events.Event{Type: t, Session: a.Session, Tenant: a.Tenant, Tool: a.Tool, Approval: a.ID, Mode: a.Mode, Role: role})
}

// Pins wraps the pin store so that the records hear of every tool it
// holds, once per held tool and reason.
func (r *Records) Pins(next proxy.Pinner) proxy.Pinner {
	return &quarantinePinner{next: next, r: r, seen: map[string]string{}}
}

type quarantinePinner struct {
	next proxy.Pinner
	r    *Records
	mu   sync.Mutex
	seen map[string]string
}

func (q *quarantinePinner) Check(srv config.Server, entries []*catalog.Entry) (map[string]string, string) {
	held, problem := q.next.Check(srv, entries)
	q.announce(srv, held, func(name string) string { return srv.ID + "_" + name })
	return held, problem
}

// announce emits a quarantine event for each item of held whose reason
// is new since the last check (a check runs at every boot and list
// change; the records want each holding once). subject names the item
// in the event.
func (q *quarantinePinner) announce(srv config.Server, held map[string]string, subject func(string) string) {
	q.mu.Lock()
	var fresh []string
	for _, item := range slices.Sorted(maps.Keys(held)) {
		key := srv.ID + "\x00" + item
		if q.seen[key] != held[item] {
			q.seen[key] = held[item]
			fresh = append(fresh, item)
		}
	}
	q.mu.Unlock()
	for _, item := range fresh {
		q.r.bus.Emit(events.Event{Type: events.Quarantine, Server: srv.ID, Tool: subject(item),
			Source: "proxy", Detail: q.r.detail(held[item])})
	}
}

// CheckSkills passes a child's skills to the store when it pins skills,
// and the records hear of each skill it holds, as of a held tool.
func (q *quarantinePinner) CheckSkills(srv config.Server, list []skills.Pinned) (map[string]string, string) {
	sp, ok := q.next.(proxy.SkillPinner)
	if !ok {
		return nil, ""
	}
	held, problem := sp.CheckSkills(srv, list)
	q.announce(srv, held, func(uri string) string { return uri })
	return held, problem
}

// callEvents turns every call into a tool_call event (and a tool_error
// one when it failed).
type callEvents struct{ r *Records }

var _ router.Observer = callEvents{}

func (o callEvents) Observe(_ context.Context, out router.Outcome) {
	if !o.r.bus.Listening() {
		return
	}
	c := out.Call
	e := o.event(c)
	if out.Refused {
		e.Outcome = events.OutcomeRefused
		if out.Err != nil {
			e.Detail = o.detail(c, out.Err.Error())
		} else if out.Result != nil {
			e.Detail = o.detail(c, sessionrecord.ResultText(out))
		}
		o.r.bus.Emit(e)
		return
	}
	ms := float64(time.Since(c.Started).Microseconds()) / 1000
	e.LatencyMs = &ms
	e.Outcome = events.OutcomeOK
	switch {
	case out.Err != nil:
		e.Outcome, e.Detail = events.OutcomeError, o.detail(c, out.Err.Error())
	case out.Result != nil && out.Result.IsError:
		e.Outcome, e.Detail = events.OutcomeError, o.detail(c, sessionrecord.ResultText(out))
	}
	o.r.bus.Emit(e)
	if e.Outcome == events.OutcomeError {
		e.Type = events.ToolError
		o.r.bus.Emit(e)
	}
}

// detail is a call's answer as an event shows it: scrubbed of the
// config's secrets and of the call's own secret arguments, bounded.
func (o callEvents) detail(c *router.Call, text string) string {
	return o.r.scrub.Call(c, c.Args).Scrubber.Bounded(text, detailLimit)
}

func (o callEvents) event(c *router.Call) events.Event {
	e := events.Event{Type: events.ToolCall, Tool: c.Entry.Name, Server: c.Entry.Server, Source: c.Entry.Source.String(), Run: c.Run}
	// No arguments are left out of the event, as an empty map was.
	if a := o.r.scrub.Call(c, c.Args).Redacted; string(a) != "{}" {
		e.Args = a
	}
	if c.Session != nil {
		e.Session, e.Tenant, e.Role, e.Transport = c.Session.ID, c.Session.Identity.Tenant, c.Session.Role, transportOf(c.Session)
	}
	return e
}

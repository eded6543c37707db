package proxy

//lint:file-ignore SA1019 roots pass through on purpose; see docs/decisions.md

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/childauth"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

// Per-caller instances. A child whose scope is subject or session is
// still configured once: that child (the template) boots as every child
// does, its tools are the ones the catalog lists and the pins check, and
// it takes no call. Each caller's calls go to an instance of its own, a
// child of the same definition started at the caller's first call,
// supervised and restarted as any child is, stopped once idle. An
// instance serves only the tools the template listed, as the template
// defined them: a tool it defines otherwise is refused, so every
// instance answers to the same pinned definitions.

// InstanceSettings bound the per-caller instances (EVOKORE_INSTANCE_*).
type InstanceSettings struct {
	// Idle is how long an instance may go without a call before it is
	// stopped (EVOKORE_INSTANCE_IDLE_MS).
	Idle time.Duration
	// Max bounds the instances running at once, every child together
	// (EVOKORE_INSTANCE_MAX).
	Max int
	// InputHold is how long a child's request for input, passed to a
	// caller of 2026-07-28 as input_required, waits for the caller's
	// retry (EVOKORE_INPUT_HOLD_MS, held.go).
	InputHold time.Duration
}

// ReadInstanceSettings reads the instances' variables; v collects what
// it cannot use.
func ReadInstanceSettings(v *config.Vars) InstanceSettings {
	return InstanceSettings{
		Idle:      v.Millis("EVOKORE_INSTANCE_IDLE_MS", 0),
		Max:       v.Positive("EVOKORE_INSTANCE_MAX"),
		InputHold: v.Millis("EVOKORE_INPUT_HOLD_MS", 0),
	}
}

// withDefaults fills what a caller left zero (tests build Options by
// hand).
func (s InstanceSettings) withDefaults() InstanceSettings {
	if s.Idle <= 0 {
		s.Idle = config.DefaultInstanceIdle
	}
	if s.Max <= 0 {
		s.Max = config.DefaultInstanceMax
	}
	if s.InputHold <= 0 {
		s.InputHold = config.DefaultInputHold
	}
	return s
}

// instanceKey names one caller's instance of one server.
type instanceKey struct{ server, caller string }

// instance is one caller's child of a per-caller server.
type instance struct {
	key instanceKey
	// template is the configured child the instance was started for: a
	// reload that replaces it retires the instance too.
	template *child
	c        *child
	// tenant and subject are the authenticated caller the instance was
	// started for ("" without one); owner is whose upstream tokens its
	// connection uses (childauth.OwnerOf them).
	tenant, subject string
	owner           childauth.Owner

	// Under instances.mu: the calls open on it and when the last ended.
	calls int
	idle  time.Time
	// sess is the caller's latest session, whose roots the instance
	// is told.
	sess *session.Session
	// roots are what a caller of 2026-07-28 answered when the call that
	// started the instance asked (startRoots): such a caller has no
	// session to ask when the instance asks.
	roots *mcp.ListRootsResult
}

// instances is the supervisor's table of per-caller instances.
type instances struct {
	mu    sync.Mutex
	byKey map[instanceKey]*instance
	// stopping counts the instances taken out of byKey whose run loops
	// have not yet ended: their processes still run, so they count
	// toward the cap.
	stopping int
	// reaper is set once the goroutine that stops idle instances runs.
	reaper bool
}

// callerKey is whose instance a call of a per-caller server goes to: the
// tenant + subject (else the session) for subject scope, the session for
// session scope; "" when the call has no session.
func callerKey(spec config.Server, sess *session.Session) string {
	if sess == nil {
		return ""
	}
	if spec.InstanceScope() == config.ScopeSession {
		return sess.ID
	}
	return session.CallerOf(sess)
}

// MsgInstanceCap is the refusal of a caller's first call once the
// router runs as many instances as EVOKORE_INSTANCE_MAX allows.
func MsgInstanceCap(server string, running int) string {
	return fmt.Sprintf("evokore cannot start an instance of server '%s' for this caller: %d instances are running, the most EVOKORE_INSTANCE_MAX allows; try again once one is idle", server, running)
}

// instanceFor is the instance of tmpl for the caller of c, started on
// first use; done must be called when the call ends. The error is the
// text the call answers.
func (s *Supervisor) instanceFor(tmpl *child, c *router.Call, roots *mcp.ListRootsResult) (in *instance, done func(), refusal string) {
	caller := callerKey(tmpl.spec, c.Session)
	if caller == "" {
		return nil, nil, fmt.Sprintf("evokore cannot call server '%s' without a session: each caller has an instance of its own", tmpl.spec.ID)
	}
	key := instanceKey{tmpl.spec.ID, caller}
	set := &s.instances
	if refusal := s.subjectEnvRefusal(tmpl, key, c.Session); refusal != "" {
		return nil, nil, refusal
	}
	set.mu.Lock()
	in = set.byKey[key]
	var stale *instance
	if in != nil && in.template != tmpl {
		// A reload replaced the server: its instances go with it.
		stale, in = in, nil
		delete(set.byKey, key)
		set.stopping++
	}
	if in == nil {
		// The caller's stale instance, stopped before its new one starts,
		// makes no room and takes none.
		n := len(set.byKey) + set.stopping
		if stale != nil {
			n--
		}
		if n >= s.instanceSettings.Max {
			set.mu.Unlock()
			s.stopInstance(stale)
			return nil, nil, MsgInstanceCap(tmpl.spec.ID, n)
		}
		id := c.Session.Identity
		in = &instance{key: key, template: tmpl, roots: roots, tenant: id.Tenant, subject: id.Subject, owner: childauth.OwnerOf(id.Tenant, id.Subject)}
		in.c = newChild(s, tmpl.spec)
		in.c.inst = in
		if set.byKey == nil {
			set.byKey = map[instanceKey]*instance{}
		}
		set.byKey[key] = in
		in.sess = c.Session
		in.calls++
		startReaper := !set.reaper
		set.reaper = true
		set.mu.Unlock()
		s.stopInstance(stale)
		s.reconf.Lock()
		if s.ctx.Err() == nil {
			// Close has not begun waiting for the run loops.
			s.launch(in.c, nil)
			if startReaper {
				s.wg.Go(s.reapInstances)
			}
		}
		s.reconf.Unlock()
	} else {
		in.sess = c.Session
		if in.roots == nil {
			in.roots = roots
		}
		in.calls++
		set.mu.Unlock()
	}
	return in, func() {
		set.mu.Lock()
		in.calls--
		in.idle = time.Now()
		set.mu.Unlock()
	}, ""
}

// subjectEnvRefusal is why a caller's first call of a child with
// subjectEnv starts no instance (its tenant's file is missing, open to
// others, or has no entry for it), naming the file; "" when it may, or
// when the caller's instance runs already.
func (s *Supervisor) subjectEnvRefusal(tmpl *child, key instanceKey, sess *session.Session) string {
	if len(tmpl.spec.SubjectEnv) == 0 {
		return ""
	}
	s.instances.mu.Lock()
	running := s.instances.byKey[key] != nil
	s.instances.mu.Unlock()
	if running {
		return ""
	}
	id := session.IdentityOf(sess)
	if _, err := subjectValues(s.opts.Home, id.Tenant, id.Subject, tmpl.spec); err != nil {
		return "evokore cannot start an instance of server '" + tmpl.spec.ID + "' for this caller: " + err.Error()
	}
	return ""
}

// reapInstances stops the instances idle for longer than the setting,
// and those of servers a reload replaced, until the supervisor closes.
func (s *Supervisor) reapInstances() {
	idle := s.instanceSettings.Idle
	tick := time.NewTicker(max(idle/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		}
		var gone []*instance
		s.instances.mu.Lock()
		for key, in := range s.instances.byKey {
			if in.calls == 0 && (time.Since(in.idle) > idle || !s.current(in.template)) {
				gone = append(gone, in)
				delete(s.instances.byKey, key)
				s.instances.stopping++
			}
		}
		s.instances.mu.Unlock()
		// Each on its own: one slow to stop (it may take three shutdown
		// graces) holds up neither the others nor the next sweep.
		for _, in := range gone {
			s.wg.Go(func() { s.stopInstance(in) })
		}
	}
}

// stopInstance stops an instance taken out of the table (and counted
// in stopping), and waits for its run loop; nil does nothing.
func (s *Supervisor) stopInstance(in *instance) {
	if in == nil {
		return
	}
	in.c.shutdown(s.opts.ShutdownGrace)
	<-in.c.exitedOrNever()
	s.instances.mu.Lock()
	s.instances.stopping--
	s.instances.mu.Unlock()
}

// closeInstances stops every instance, at Close.
func (s *Supervisor) closeInstances() {
	s.instances.mu.Lock()
	all := make([]*instance, 0, len(s.instances.byKey))
	for key, in := range s.instances.byKey {
		all = append(all, in)
		delete(s.instances.byKey, key)
		s.instances.stopping++
	}
	s.instances.mu.Unlock()
	var wg sync.WaitGroup
	for _, in := range all {
		wg.Go(func() { s.stopInstance(in) })
	}
	wg.Wait()
}

// instanceCount counts the running instances of server.
func (s *Supervisor) instanceCount(server string) int {
	s.instances.mu.Lock()
	defer s.instances.mu.Unlock()
	n := 0
	for key := range s.instances.byKey {
		if key.server == server {
			n++
		}
	}
	return n
}

// heldByTemplate is why an instance may not serve tool: it is not among
// the template's tools, or its definition differs from the template's
// (which the catalog lists and the pins checked); "" when it may.
func (in *instance) heldByTemplate(tool string) string {
	want := in.template.getLastTools()
	var mine *mcp.Tool
	for _, t := range in.c.getLastTools() {
		if t.Name == tool {
			mine = t
			break
		}
	}
	for _, t := range want {
		if t.Name != tool {
			continue
		}
		if mine == nil {
			return fmt.Sprintf("the instance of server '%s' for this caller does not serve '%s'", in.key.server, tool)
		}
		if catalog.DefinitionHash(mine) != catalog.DefinitionHash(t) {
			return fmt.Sprintf("the instance of server '%s' for this caller defines '%s' otherwise than the pinned definition: evokore does not call it", in.key.server, tool)
		}
		return ""
	}
	return fmt.Sprintf("server '%s' lists no tool '%s'", in.key.server, tool)
}

// instanceRoots answers an instance's roots/list with its caller's
// roots: the caller's latest session's, asked within the open call when
// there is one; for a caller of 2026-07-28, which has no session, what it
// answered when the instance started (startRoots); none when the caller
// cannot be asked (a client without roots).
func (s *Supervisor) instanceRoots(ctx context.Context, in *instance) (*mcp.ListRootsResult, error) {
	none := &mcp.ListRootsResult{Roots: []*mcp.Root{}}
	s.instances.mu.Lock()
	sess, roots := in.sess, in.roots
	s.instances.mu.Unlock()
	if sess != nil && roundTrips(sess) && roots != nil {
		return roots, nil
	}
	if sess == nil || sess.Peer == nil || roundTrips(sess) {
		return none, nil
	}
	ip := sess.Peer.InitializeParams()
	if ip == nil || !hasRoots(ip.Capabilities) {
		return none, nil
	}
	return sess.Peer.ListRoots(ctx, &mcp.ListRootsParams{})
}

// RootsChanged passes a caller's roots/list_changed on to the instances
// sess is the latest session of, and to no other child: each asks for
// its roots again and is answered with that caller's.
func (s *Supervisor) RootsChanged(sess *session.Session) {
	if sess == nil {
		return
	}
	var mine []*child
	s.instances.mu.Lock()
	for _, in := range s.instances.byKey {
		if in.sess != nil && in.sess.ID == sess.ID {
			mine = append(mine, in.c)
		}
	}
	s.instances.mu.Unlock()
	for _, c := range mine {
		c.mu.Lock()
		k := c.conn
		c.mu.Unlock()
		if k != nil && k.client != nil {
			// The SDK's client notifies its sessions when its own list
			// changes; that list is never read (rootsMiddleware answers),
			// so a marker root added and taken out again sends the news.
			k.client.AddRoots(&mcp.Root{URI: rootsChangedMarker})
			k.client.RemoveRoots(rootsChangedMarker)
		}
	}
}

// rootsChangedMarker is the root RootsChanged adds and removes.
const rootsChangedMarker = "evokore:roots-changed"

// awaitRestart waits, when the instance went down since its last call,
// for its run loop to start it again, so the caller's next call is
// served by the new process rather than told the server is reconnecting:
// the instance is this caller's alone, and nobody else waits on it. It
// waits no longer than a restart's backoff and boot can take, and not
// for an instance that cannot start.
func (c *child) awaitRestart(ctx context.Context) {
	t := time.NewTimer(backoffCap + 2*c.sup.bootTimeout(c.spec))
	defer t.Stop()
	for {
		c.mu.Lock()
		state, gaveUp, ever, changed := c.state, c.gaveUp, c.everConnected, c.changed
		c.mu.Unlock()
		if state == StatusConnected || state == StatusBooting || gaveUp || !ever {
			return // a boot in progress is waited for by session
		}
		select {
		case <-changed:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// rootsState is the child's state in the sealed requestState of the
// roots a call that starts an instance asks its caller for.
const rootsState = "evokore-roots"

// rootsInput is the id of that input request.
const rootsInput = "evokore-roots"

// startRoots is what a caller of 2026-07-28 that declared roots is asked,
// or has answered, when its call would start its instance of tmpl: the
// instance asks for its roots as it starts, before any call, and such a
// caller has no session to ask then. So the call that would start it is
// answered input_required with roots/list first (ask); the retry with
// the answer (roots) starts it, told those roots. An instance that runs
// already keeps the roots it started with; one reaped is asked for again.
// Nothing is asked of a caller of 2025-11-25 (its session is asked) or
// of one that declared no roots (its instance is told none).
func (s *Supervisor) startRoots(tmpl *child, c *router.Call) (roots *mcp.ListRootsResult, ask *mcp.CallToolResult, err error) {
	sess := c.Session
	if !roundTrips(sess) || sess.Peer == nil || sess.Peer.InitializeParams() == nil || !hasRoots(sess.Peer.InitializeParams().Capabilities) {
		return nil, nil, nil
	}
	binding, err := callBinding(c)
	if err != nil {
		return nil, nil, err
	}
	if c.Input != nil {
		// A retry: with the roots asked, or with an answer to the
		// instance's own question, which goes on to it.
		responses, state, err := s.openInput(c.Input, tmpl.spec.ID, binding, func() string { return "'" + c.Entry.Name + "'" })
		if err != nil || state != rootsState {
			return nil, nil, err
		}
		return rootsAnswer(responses), nil, nil
	}
	key := instanceKey{tmpl.spec.ID, callerKey(tmpl.spec, sess)}
	s.instances.mu.Lock()
	in := s.instances.byKey[key]
	s.instances.mu.Unlock()
	if in != nil && in.template == tmpl {
		return nil, nil, nil
	}
	return nil, &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{rootsInput: &mcp.ListRootsParams{}},
		RequestState:  s.sealState(tmpl.spec.ID, binding, rootsState),
	}, nil
}

// rootsAnswer is the caller's answer to startRoots' question; no roots
// when it answered something else.
func rootsAnswer(responses mcp.InputResponseMap) *mcp.ListRootsResult {
	if r, ok := responses[rootsInput].(*mcp.ListRootsResult); ok && r.Roots != nil {
		return r
	}
	return &mcp.ListRootsResult{Roots: []*mcp.Root{}}
}

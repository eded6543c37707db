package proxy

//lint:file-ignore SA1019 sampling, roots and logging pass through on purpose; see docs/decisions.md

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/childauth"
	"github.com/evokore/evokore/internal/config"
)

// Restart backoff: doubling from backoffBase up to backoffCap; a child
// that stayed up for stableAfter starts again from the base.
const (
	backoffBase = 250 * time.Millisecond
	backoffCap  = 30 * time.Second
	stableAfter = time.Minute
)

// child is one configured server. Its goroutine (run) owns the
// connection (its process and client session); other goroutines read its
// state under mu.
type child struct {
	sup  *Supervisor
	spec config.Server
	// redact hides the server's secrets in every error text it shows.
	redact *strings.Replacer

	mu         sync.Mutex
	state      string
	lastErr    string
	errorCount int
	lastPing   time.Time
	toolCount  int
	lastTools  []*mcp.Tool
	// taskTools holds the tools the child runs as its own tasks, by
	// their support ("optional", "required"), when the router can pass
	// them through (childtask.go).
	taskTools map[string]string
	// conn is the connection while the child is up, nil between boots.
	conn *conn
	// ready is closed when the boot attempt in progress ends, either way.
	ready chan struct{}
	// changed is closed and replaced on every state change, so a call
	// waiting for a child that is not ready sees each step of a restart.
	changed chan struct{}
	// everConnected is set once a boot succeeded: from then on a child
	// that is down is restarting, not failing to start.
	everConnected bool
	// gaveUp is set when a boot failure cannot be fixed by retrying.
	gaveUp bool
	// announced is what the last "Proxied" line of this boot reported.
	announced string
	// launched is set once the run loop started.
	launched bool
	// expired is set when a call learnt that the server forgot the
	// session: its end is then no failure of the server's.
	expired bool
	// newEra is set when the child is configured for MCP 2026-07-28 or
	// once it refused initialize as an unknown method: it is asked for
	// that era from then on (era.go). Only the run loop touches it.
	newEra bool
	// dual is the child's second connection, of the new era, when it
	// speaks both eras (dual.go).
	dual dualState
	// inst is set on one caller's instance of a per-caller server
	// (instances.go): it lists nothing and caches nothing of its own.
	inst *instance

	relisting sync.Mutex
	// relistPending is set while a re-read is scheduled and not started.
	relistPending atomic.Bool
	// relists counts the re-reads running; relistsOff (under mu) lets no
	// more start once the run loop is returning.
	relists    sync.WaitGroup
	relistsOff bool

	// ctx ends this child's run loop: at Close, or when a reload removed
	// or replaced it. exited is closed when the run loop has returned.
	ctx    context.Context
	cancel context.CancelFunc
	exited chan struct{}

	// calls counts the calls forwarded to this child and not answered;
	// once retired, no call enters and drained is closed at zero.
	callsMu sync.Mutex
	calls   int
	retired bool
	drained chan struct{}
}

func newChild(s *Supervisor, spec config.Server) *child {
	c := &child{sup: s, spec: spec, state: StatusBooting, ready: make(chan struct{}), changed: make(chan struct{}), redact: spec.Redactor(s.opts.Env),
		exited: make(chan struct{}), drained: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	c.newEra = configuredNewEra(spec)
	if spec.Disabled {
		c.state = StatusDisabled
		close(c.ready)
	}
	return c
}

// errFatal marks boot failures that retrying cannot fix, such as an unset
// placeholder: the child stays in error until the config changes.
type errFatal struct{ error }

func (e errFatal) Unwrap() error { return e.error }

// run boots the child, waits for it to die, and boots it again with
// backoff, until ctx ends. firstDone is called after the first attempt.
func (c *child) run(ctx context.Context, caps *mcp.ClientCapabilities, firstDone func()) {
	defer c.stopRelists()
	attempt := 0
	for {
		started := time.Now()
		authChanged := c.authChanged()
		err := c.boot(ctx, caps)
		if err != nil && ctx.Err() == nil {
			// Recorded before firstDone: whoever waits for the first boot
			// sees its outcome, never a child still "booting".
			c.sup.log.Info(c.redact.Replace(MsgChildBootFailed(c.spec.ID, err)))
			c.fail(err, errors.As(err, new(errFatal)))
		}
		if firstDone != nil {
			firstDone()
			firstDone = nil
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if errors.As(err, new(errFatal)) {
				return
			}
			if needsAuthorization(err) {
				// No retry against a server that will refuse again:
				// the next boot waits for a login.
				if !c.awaitAuthorization(ctx, authChanged) {
					return
				}
				attempt = 0
				c.rebooting()
				continue
			}
		} else {
			err := c.waitForExit(ctx)
			if ctx.Err() != nil {
				return
			}
			if c.takeExpired() || errors.Is(err, mcp.ErrSessionMissing) {
				// The server forgot the session (it expired, or the
				// server restarted): the server is up, so open a new
				// session at once, keeping its tools listed; calls wait
				// for it instead of being told the server died.
				c.sup.log.Info("[EVOKORE] A server's session expired; opening a new one", "server", c.spec.ID)
				c.booting()
				if time.Since(started) > stableAfter {
					attempt = 0
				} else if !backoff(ctx, &attempt) {
					// A server that forgets every session soon after
					// it opened it (replicas without shared sessions)
					// is asked again with backoff, not in a loop.
					return
				}
				continue
			}
			c.sup.log.Info(c.redact.Replace(MsgChildExited(c.spec.ID, err)))
			c.fail(fmt.Errorf("exited: %v", err), false)
			c.sup.register(c, nil, false)
			if c.inst == nil {
				c.sup.setContent(c.spec.ID, nil)
			}
			if time.Since(started) > stableAfter {
				attempt = 0
			}
		}
		if !backoff(ctx, &attempt) {
			return
		}
		c.rebooting()
	}
}

// backoff waits before the attempt-th retry and counts it; false when ctx
// ended first.
func backoff(ctx context.Context, attempt *int) bool {
	delay := min(backoffBase<<min(*attempt, 16), backoffCap)
	*attempt++
	select {
	case <-ctx.Done():
		return false
	case <-time.After(delay):
		return true
	}
}

// boot starts the child, connects, lists its tools and registers them.
func (c *child) boot(ctx context.Context, caps *mcp.ClientCapabilities) error {
	if c.spec.Invalid != "" {
		return errFatal{errors.New(c.spec.Invalid)}
	}
	spec, err := c.resolveSpec()
	if err != nil {
		return errFatal{err}
	}
	timeout := c.sup.bootTimeout(c.spec)
	opts := c.clientOptions(caps)
	c.sup.contentHandlers(c, opts)
	k, err := c.connect(ctx, spec, c.protocol(), opts, c.sup.rootsMiddleware(c), c.sup.elicitMiddleware(spec.ID, caps))
	if err != nil {
		if c.askNewEra(ctx, err) {
			return c.boot(ctx, caps)
		}
		if errors.As(err, new(errConnectTimeout)) {
			return errors.New(MsgConnectTimeout(spec.ID, timeout))
		}
		return err
	}
	c.mu.Lock()
	c.conn = k
	c.mu.Unlock()

	tools, err := listTools(ctx, k.cs, timeout, spec.ID)
	if err != nil {
		k.abandon()
		c.mu.Lock()
		c.conn = nil
		c.mu.Unlock()
		return err
	}
	c.readTaskSupport(ctx, k)
	if level, ok := c.sup.logLevel.Load().(mcp.LoggingLevel); ok {
		c.applyLogLevel(k.cs, level)
	}
	c.sup.register(c, tools, true)
	c.sup.loadContent(c, k.cs)
	if c.sup.opts.Home != "" && c.inst == nil {
		if err := saveManifest(c.sup.opts.Home, c.spec, tools); err != nil {
			c.sup.log.Info("[EVOKORE] Cannot cache a tool list", "server", spec.ID, "err", err)
		}
	}
	c.mu.Lock()
	c.state, c.lastErr, c.lastPing = StatusConnected, "", time.Now()
	c.everConnected = true
	close(c.ready)
	c.notifyLocked()
	c.mu.Unlock()
	return nil
}

// listTools fetches every page of a child's tools within timeout.
func listTools(ctx context.Context, cs *mcp.ClientSession, timeout time.Duration, id string) ([]*mcp.Tool, error) {
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tools, err := collect(lctx, "tools", toolPages(cs))
	if err != nil {
		if lctx.Err() == context.DeadlineExceeded {
			return nil, errors.New(MsgListTimeout(id, timeout))
		}
		return nil, err
	}
	if tools == nil {
		tools = []*mcp.Tool{}
	}
	return tools, nil
}

// waitForExit blocks until the child's connection closes or ctx ends.
func (c *child) waitForExit(ctx context.Context) error {
	c.mu.Lock()
	k := c.conn
	c.mu.Unlock()
	if k == nil {
		// Shutdown took the connection between boot and this wait.
		return errors.New("connection closed")
	}
	closed := make(chan error, 1)
	go func() { closed <- k.cs.Wait() }()
	var err error
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err = <-closed:
	}
	// The second connection goes with the first.
	c.closeNewEra()
	if proc := k.proc; proc != nil {
		// The connection closed: make sure the process is gone too, and
		// report how it ended.
		proc.stopAfter(c.sup.opts.ShutdownGrace)
		if perr := proc.exitErr(); perr != nil {
			err = perr
		}
	}
	c.mu.Lock()
	c.conn = nil
	c.mu.Unlock()
	if err == nil {
		err = errors.New("connection closed")
	}
	return err
}

// requestRelist schedules a re-read of the tool list after the child
// announced a change. Announcements coalesce: while one re-read waits or
// runs, any number of further announcements cost one more re-read, not
// one each, so a child flooding list_changed cannot make the router list
// its tools thousands of times.
func (c *child) requestRelist() {
	if c.relistPending.Swap(true) {
		return // one is already waiting to run
	}
	c.mu.Lock()
	if c.relistsOff {
		c.mu.Unlock()
		return // stopping: nothing may write after run returns
	}
	c.relists.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.relists.Done()
		c.relisting.Lock()
		defer c.relisting.Unlock()
		// Cleared before listing: an announcement from now on may have
		// come after this read's answer, and schedules another.
		c.relistPending.Store(false)
		c.relist()
	}()
}

// stopRelists lets no re-read start and waits for the one running, so no
// manifest is written once the child has stopped.
func (c *child) stopRelists() {
	c.mu.Lock()
	c.relistsOff = true
	c.mu.Unlock()
	c.relists.Wait()
}

// relist re-reads the tool list; requestRelist serialises the calls.
func (c *child) relist() {
	cs := c.clientSession()
	if cs == nil {
		return
	}
	tools, err := listTools(c.ctx, cs, c.sup.bootTimeout(c.spec), c.spec.ID)
	if err != nil {
		c.sup.log.Info("[EVOKORE] Cannot re-list tools", "server", c.spec.ID, "err", c.redact.Replace(err.Error()))
		return
	}
	c.mu.Lock()
	k := c.conn
	c.mu.Unlock()
	if k != nil {
		c.readTaskSupport(c.ctx, k)
	}
	c.sup.register(c, tools, true)
	if c.sup.opts.Home != "" && c.inst == nil {
		_ = saveManifest(c.sup.opts.Home, c.spec, tools)
	}
}

func (c *child) fail(err error, fatal bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state = StatusError
	c.lastErr = c.redact.Replace(err.Error())
	var na *childauth.NeedsAuthorizationError
	if errors.As(err, &na) {
		c.state, c.lastErr = StatusNeedsAuthorization, c.redact.Replace(na.Error())
	}
	c.errorCount++
	c.gaveUp = c.gaveUp || fatal
	select {
	case <-c.ready:
	default:
		close(c.ready)
	}
	c.notifyLocked()
}

// expire marks the session of k forgotten by its server (a call was
// answered "session not found"): calls wait for the new session the run
// loop opens once k's is closed here.
func (c *child) expire(k *conn) {
	c.mu.Lock()
	if c.conn == k {
		c.expired = true
		if c.state == StatusConnected {
			c.state = StatusBooting
			c.ready = make(chan struct{})
			c.notifyLocked()
		}
	}
	c.mu.Unlock()
	go k.cs.Close()
}

func (c *child) takeExpired() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	was := c.expired
	c.expired = false
	return was
}

// booting marks the child booting again, unless it already is (expire
// did, and calls wait on that ready channel).
func (c *child) booting() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != StatusBooting {
		c.state = StatusBooting
		c.ready = make(chan struct{})
		c.notifyLocked()
	}
}

func (c *child) rebooting() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state = StatusBooting
	c.ready = make(chan struct{})
	c.announced = ""
	c.notifyLocked()
}

// announce reports whether a registration is news for this boot: a tool
// list, count or skip count other than the last one announced.
func (c *child) announce(tools []*mcp.Tool, registered, skipped int) bool {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d", registered, skipped)
	for _, t := range tools {
		b.WriteString("\x00" + t.Name + "\x00" + t.Description)
	}
	key := b.String()
	c.mu.Lock()
	defer c.mu.Unlock()
	if key == c.announced {
		return false
	}
	c.announced = key
	return true
}

// notifyLocked wakes every call waiting for a state change; c.mu is held.
func (c *child) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

func (c *child) setLastTools(tools []*mcp.Tool) {
	c.mu.Lock()
	c.lastTools = tools
	c.mu.Unlock()
}

func (c *child) getLastTools() []*mcp.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastTools
}

func (c *child) setToolCount(n int) {
	c.mu.Lock()
	c.toolCount = n
	c.mu.Unlock()
}

// session returns the connection, waiting for a boot in progress up to
// the boot timeout. A child in error gets EVOKORE-MCP's "reconnecting"
// error.
func (c *child) session(ctx context.Context) (*conn, error) {
	if k := c.connected(); k != nil {
		return k, nil
	}
	c.mu.Lock()
	state, ready := c.state, c.ready
	c.mu.Unlock()
	if state == StatusNeedsAuthorization {
		return c.authorizeForCall(ctx)
	}
	if state == StatusBooting {
		timeout := c.sup.bootTimeout(c.spec)
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-ready:
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if k := c.connected(); k != nil {
			return k, nil
		}
		// The boot waited for found that a user must authorize the
		// child (a caller's instance meets this on its first call):
		// this call's caller is asked.
		c.mu.Lock()
		state = c.state
		c.mu.Unlock()
		if state == StatusNeedsAuthorization {
			return c.authorizeForCall(ctx)
		}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: MsgReconnecting(c.spec.ID)}
}

// reconnected waits, up to the boot timeout, for a connection other than
// old: after the server forgot old's session, the run loop opens a new
// one.
func (c *child) reconnected(ctx context.Context, old *conn) *conn {
	t := time.NewTimer(c.sup.bootTimeout(c.spec))
	defer t.Stop()
	for {
		c.mu.Lock()
		k, state, changed := c.conn, c.state, c.changed
		c.mu.Unlock()
		if state == StatusConnected && k != nil && k != old {
			return k
		}
		select {
		case <-changed:
		case <-t.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

// connected is the child's connection when it is connected, nil while
// it boots, restarts or is down.
func (c *child) connected() *conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == StatusConnected {
		return c.conn
	}
	return nil
}

// clientSession is the session of the child's connection, whatever its
// state; nil between boots.
func (c *child) clientSession() *mcp.ClientSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return nil
	}
	return c.conn.cs
}

// setLogLevel applies a logging level to the connected child, if any.
func (c *child) setLogLevel(level mcp.LoggingLevel) {
	if cs := c.clientSession(); cs != nil {
		c.applyLogLevel(cs, level)
	}
}

func (c *child) applyLogLevel(cs *mcp.ClientSession, level mcp.LoggingLevel) {
	if ir := cs.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Logging == nil {
		return // the child does not log over MCP
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.sup.bootTimeout(c.spec))
	defer cancel()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
		c.sup.log.Info("[EVOKORE] Cannot set a server's log level", "server", c.spec.ID, "err", c.redact.Replace(err.Error()))
	}
}

// lost marks the child down as soon as a call sees its connection gone,
// so the next call waits for the restart instead of reaching a dead
// session; the run loop then restarts it.
func (c *child) lost(k *conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == k && c.state == StatusConnected {
		c.state = StatusError
		c.lastErr = "connection lost"
		c.notifyLocked()
	}
}

// stoppedReading marks the child down as soon as its process proc
// stopped reading its input (lockedStdin), before the process is gone:
// calls wait for the restart instead of being written to a pipe that
// takes nothing more.
func (c *child) stoppedReading(proc *process) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil && c.conn.proc == proc && c.state == StatusConnected {
		c.state = StatusError
		c.lastErr = errStoppedReading.Error()
		c.notifyLocked()
	}
}

// connectionLost reports whether the child is no longer connected.
func (c *child) connectionLost() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state != StatusConnected || c.conn == nil
}

func (c *child) recordCall(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.errorCount++
		return
	}
	c.lastPing = time.Now()
}

func (c *child) status() ServerStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := ServerStatus{
		ID:                  c.spec.ID,
		Status:              c.authStatus(c.state),
		ConnectionType:      c.spec.Transport,
		ErrorCount:          c.errorCount,
		RegisteredToolCount: c.toolCount,
		LastError:           c.lastErr,
		NamePrefix:          c.spec.NamePrefix(),
		Scope:               c.spec.InstanceScope(),
	}
	if !c.lastPing.IsZero() {
		t := c.lastPing.UTC()
		st.LastPing = &t
	}
	return st
}

// enter admits a call to the child; false once a reload retired it.
// Every admitted call must leave.
func (c *child) enter() bool {
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	if c.retired {
		return false
	}
	c.calls++
	return true
}

func (c *child) leave() {
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	c.calls--
	if c.retired && c.calls == 0 {
		close(c.drained)
	}
}

// retire refuses new calls; the returned channel is closed once the
// calls already admitted have answered.
func (c *child) retire() <-chan struct{} {
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	if !c.retired {
		c.retired = true
		if c.calls == 0 {
			close(c.drained)
		}
	}
	return c.drained
}

// shutdown ends the run loop, closes the session and stops the process.
func (c *child) shutdown(grace time.Duration) {
	c.cancel()
	c.mu.Lock()
	k := c.conn
	c.conn = nil
	c.mu.Unlock()
	var second sync.WaitGroup
	second.Go(c.closeNewEra)
	if k != nil {
		k.stop(grace)
	}
	second.Wait()
}

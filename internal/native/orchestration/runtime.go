package orchestration

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/native/claims"
	"github.com/evokore/evokore/internal/native/fleet"
)

// Run statuses.
const (
	StatusRunning  = "running"
	StatusDegraded = "degraded"
	StatusStopping = "stopping"
	StatusStopped  = "stopped"
	StatusError    = "error"
)

// AgentSpec is one agent of a run as orchestration_start takes it.
type AgentSpec struct {
	Command    string   `json:"command"`
	Args       []string `json:"args,omitempty"`
	Resource   string   `json:"resource,omitempty"`
	AgentLabel string   `json:"agentLabel,omitempty"`
	TTLMs      int64    `json:"ttlMs,omitempty"`
}

// Agent is one agent of a run.
type Agent struct {
	AgentID         string    `json:"agentId"`
	Spec            AgentSpec `json:"spec"`
	PID             int       `json:"pid"`
	ClaimedResource *string   `json:"claimedResource"`
	LastAliveAt     int64     `json:"lastAliveAt"`
	// Liveness is alive, dead or unknown.
	Liveness string `json:"liveness"`
	ExitCode *int   `json:"exitCode,omitempty"`
}

// Run is a run record.
type Run struct {
	RunID           string   `json:"runId"`
	Name            string   `json:"name"`
	Status          string   `json:"status"`
	StartedAt       int64    `json:"startedAt"`
	StoppedAt       *int64   `json:"stoppedAt"`
	Agents          []Agent  `json:"agents"`
	DegradedReasons []string `json:"degradedReasons"`
	// Error says why a start was rolled back.
	Error string `json:"error,omitempty"`
}

type run struct {
	Run
	stop chan struct{} // closed when the run stops
}

func (r *run) active() bool { return r.Status == StatusRunning || r.Status == StatusDegraded }

// UnknownRunError is an operation on a run id nobody started.
type UnknownRunError struct{ ID string }

func (e *UnknownRunError) Error() string { return "unknown run " + e.ID }

// Runtime is the registry of runs.
type Runtime struct {
	fleet  *fleet.Manager
	claims *claims.Store

	mu     sync.Mutex
	runs   map[string]*run
	order  []string
	next   int
	closed bool
	wg     sync.WaitGroup
}

// New returns a runtime that starts agents in f and claims resources in c.
func New(f *fleet.Manager, c *claims.Store) *Runtime {
	return &Runtime{fleet: f, claims: c, runs: map[string]*run{}, next: 1}
}

// StartError is a start that was rolled back; Run is the recorded run.
type StartError struct {
	Run Run
	Err error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("Run '%s' (%s) was rolled back: %v", e.Run.Name, e.Run.RunID, e.Err)
}

func (e *StartError) Unwrap() error { return e.Err }

// Start spawns every agent in order and claims its resource; any failure
// undoes everything and returns a *StartError.
func (rt *Runtime) Start(name string, specs []AgentSpec) (Run, error) {
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return Run{}, errors.New("the router is shutting down")
	}
	r := &run{Run: Run{RunID: fmt.Sprintf("ORCH-%03d", rt.next), Name: name, Status: "starting",
		StartedAt: time.Now().UnixMilli(), Agents: []Agent{}, DegradedReasons: []string{}}, stop: make(chan struct{})}
	rt.next++
	rt.runs[r.RunID] = r
	rt.order = append(rt.order, r.RunID)
	rt.mu.Unlock()

	var agents []Agent
	fail := func(err error) (Run, error) {
		rt.undo(agents)
		rt.mu.Lock()
		defer rt.mu.Unlock()
		now := time.Now().UnixMilli()
		r.Status, r.StoppedAt, r.Error = StatusError, &now, err.Error()
		for i := range agents {
			agents[i].Liveness, agents[i].ClaimedResource = "dead", nil
		}
		r.Agents = agents
		close(r.stop)
		return r.Run, &StartError{Run: clone(r.Run), Err: err}
	}
	for i, spec := range specs {
		snap, err := rt.fleet.Spawn(spec.Command, spec.Args, spec.Resource)
		if err != nil {
			return fail(fmt.Errorf("agent %d (%s) did not start: %w", i+1, spec.Command, err))
		}
		a := Agent{AgentID: snap.AgentID, Spec: spec, PID: snap.PID, LastAliveAt: time.Now().UnixMilli(), Liveness: "alive"}
		agents = append(agents, a)
		if spec.Resource != "" {
			if _, err := rt.claims.Acquire(spec.Resource, snap.AgentID, ttl(spec), snap.PID); err != nil {
				return fail(fmt.Errorf("agent %d (%s) could not claim '%s': %w", i+1, snap.AgentID, spec.Resource, err))
			}
			res := spec.Resource
			agents[len(agents)-1].ClaimedResource = &res
		}
	}

	rt.mu.Lock()
	defer rt.mu.Unlock()
	r.Agents = agents
	r.Status = StatusRunning
	for _, a := range agents {
		rt.wg.Add(1)
		go rt.watch(r, a)
	}
	return clone(r.Run), nil
}

func ttl(spec AgentSpec) time.Duration {
	if spec.TTLMs > 0 {
		return time.Duration(spec.TTLMs) * time.Millisecond
	}
	return claims.DefaultTTL
}

// undo releases the claims and kills the agents of a failed start.
func (rt *Runtime) undo(agents []Agent) {
	for _, a := range agents {
		if a.ClaimedResource != nil {
			_, _ = rt.claims.Release(*a.ClaimedResource, a.AgentID)
		}
		_, _ = rt.fleet.Release(a.AgentID)
	}
}

// watch keeps an agent's claim renewed while it lives and degrades the
// run when it exits while the run is active.
func (rt *Runtime) watch(r *run, a Agent) {
	defer rt.wg.Done()
	var tick <-chan time.Time
	if a.ClaimedResource != nil {
		t := time.NewTicker(ttl(a.Spec) / 2)
		defer t.Stop()
		tick = t.C
	}
	exited := rt.fleet.Exited(a.AgentID)
	for {
		select {
		case <-r.stop:
			return
		case <-tick:
			_, _ = rt.claims.Renew(*a.ClaimedResource, a.AgentID, ttl(a.Spec))
		case <-exited:
			rt.agentExited(r, a.AgentID)
			return
		}
	}
}

func (rt *Runtime) agentExited(r *run, id string) {
	snap, _ := rt.fleet.Status(id)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if !r.active() {
		return
	}
	for i := range r.Agents {
		a := &r.Agents[i]
		if a.AgentID != id {
			continue
		}
		a.Liveness, a.ExitCode = "dead", snap.ExitCode
		code := "unknown"
		if snap.ExitCode != nil {
			code = fmt.Sprint(*snap.ExitCode)
		}
		r.DegradedReasons = append(r.DegradedReasons,
			fmt.Sprintf("%s: agent exited (code %s) while the run was active", id, code))
		r.Status = StatusDegraded
		if a.ClaimedResource != nil {
			_, _ = rt.claims.Release(*a.ClaimedResource, id)
			a.ClaimedResource = nil
		}
	}
}

// Stop releases a run's claims and kills its agents. Stopping a stopped
// run returns it unchanged.
func (rt *Runtime) Stop(id string) (Run, error) {
	rt.mu.Lock()
	r, ok := rt.runs[id]
	if !ok {
		rt.mu.Unlock()
		return Run{}, &UnknownRunError{ID: id}
	}
	if !r.active() {
		defer rt.mu.Unlock()
		return clone(r.Run), nil
	}
	r.Status = StatusStopping
	close(r.stop)
	agents := clone(r.Run).Agents
	rt.mu.Unlock()

	rt.undo(agents)

	rt.mu.Lock()
	defer rt.mu.Unlock()
	now := time.Now().UnixMilli()
	r.Status, r.StoppedAt = StatusStopped, &now
	for i := range r.Agents {
		r.Agents[i].Liveness, r.Agents[i].ClaimedResource = "dead", nil
	}
	return clone(r.Run), nil
}

// Status probes the run's agents and returns it.
func (rt *Runtime) Status(id string) (Run, error) {
	rt.mu.Lock()
	r, ok := rt.runs[id]
	rt.mu.Unlock()
	if !ok {
		return Run{}, &UnknownRunError{ID: id}
	}
	rt.probe(r)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return clone(r.Run), nil
}

// All probes and returns every run, oldest first.
func (rt *Runtime) All() []Run {
	rt.mu.Lock()
	ids := append([]string(nil), rt.order...)
	rt.mu.Unlock()
	out := make([]Run, 0, len(ids))
	for _, id := range ids {
		if r, err := rt.Status(id); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// probe refreshes the liveness of an active run's agents.
func (rt *Runtime) probe(r *run) {
	rt.mu.Lock()
	if !r.active() {
		rt.mu.Unlock()
		return
	}
	ids := make([]string, len(r.Agents))
	for i, a := range r.Agents {
		ids[i] = a.AgentID
	}
	rt.mu.Unlock()
	snaps := make(map[string]fleet.Snapshot, len(ids))
	for _, id := range ids {
		if s, err := rt.fleet.Status(id); err == nil {
			snaps[id] = s
		}
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	now := time.Now().UnixMilli()
	for i := range r.Agents {
		a := &r.Agents[i]
		s, ok := snaps[a.AgentID]
		switch {
		case !ok:
			a.Liveness = "unknown"
		case s.Alive:
			a.Liveness, a.LastAliveAt = "alive", now
		default:
			a.Liveness = "dead"
		}
	}
}

// Close stops every active run and waits for the watchers.
func (rt *Runtime) Close() {
	rt.mu.Lock()
	rt.closed = true
	var ids []string
	for _, id := range rt.order {
		if rt.runs[id].active() {
			ids = append(ids, id)
		}
	}
	rt.mu.Unlock()
	for _, id := range ids {
		_, _ = rt.Stop(id)
	}
	rt.wg.Wait()
}

// clone copies a run so callers never share its slices.
func clone(r Run) Run {
	r.Agents = append([]Agent{}, r.Agents...)
	for i := range r.Agents {
		if c := r.Agents[i].ClaimedResource; c != nil {
			v := *c
			r.Agents[i].ClaimedResource = &v
		}
		if e := r.Agents[i].ExitCode; e != nil {
			v := *e
			r.Agents[i].ExitCode = &v
		}
	}
	r.DegradedReasons = append([]string{}, r.DegradedReasons...)
	if r.StoppedAt != nil {
		v := *r.StoppedAt
		r.StoppedAt = &v
	}
	return r
}

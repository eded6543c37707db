package fleet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/procgroup"
)

// Agent statuses.
const (
	StatusRunning  = "running"
	StatusClaimed  = "claimed"
	StatusReleased = "released"
)

// reapWait bounds how long a release waits for the killed agent to be
// reaped.
const reapWait = 10 * time.Second

// Snapshot is an agent as fleet_status reports it.
type Snapshot struct {
	AgentID   string  `json:"agentId"`
	PID       int     `json:"pid"`
	PGID      int     `json:"pgid,omitempty"`
	Resource  *string `json:"resource"`
	Status    string  `json:"status"`
	SpawnedAt int64   `json:"spawnedAt"`
	Alive     bool    `json:"alive"`
	// ExitCode is set once the agent has exited on its own or was killed
	// (-1 when a signal ended it).
	ExitCode *int `json:"exitCode,omitempty"`
}

type agent struct {
	id        string
	cmd       *procgroup.Cmd
	pid       int
	resource  string
	status    string
	spawnedAt time.Time
	exited    chan struct{}
	exitCode  int
}

// Manager is the fleet registry.
type Manager struct {
	env config.Env

	mu     sync.Mutex
	agents map[string]*agent
	order  []string
	next   int
	closed bool
}

// UnknownAgentError is an operation on an agent id nobody spawned.
type UnknownAgentError struct{ ID string }

func (e *UnknownAgentError) Error() string { return "unknown agent " + e.ID }

// SpawnError is a command that could not be started.
type SpawnError struct {
	Command string
	Err     error
}

func (e *SpawnError) Error() string { return "spawn " + e.Command + ": " + e.Err.Error() }

func (e *SpawnError) Unwrap() error { return e.Err }

// ReleasedAgentError is a claim on an agent that was released.
type ReleasedAgentError struct{ ID string }

func (e *ReleasedAgentError) Error() string { return "agent " + e.ID + " was released" }

// New returns an empty fleet whose agents get the launcher's base and
// toolchain allowlists of env.
func New(env config.Env) *Manager {
	return &Manager{env: env, agents: map[string]*agent{}, next: 1}
}

// Spawn starts command with args as a new agent. A non-empty resource
// labels it claimed.
func (m *Manager) Spawn(command string, args []string, resource string) (Snapshot, error) {
	cmd := procgroup.Command(context.Background(), procgroup.Spec{Path: command, Args: args,
		Env: procgroup.Env{Parent: m.env, Toolchain: true}})
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return Snapshot{}, errors.New("the fleet is shutting down")
	}
	if err := cmd.Start(); err != nil {
		return Snapshot{}, &SpawnError{Command: command, Err: err}
	}
	a := &agent{
		id:        fmt.Sprintf("FA-%03d", m.next),
		cmd:       cmd,
		pid:       cmd.Process.Pid,
		resource:  resource,
		status:    StatusRunning,
		spawnedAt: time.Now(),
		exited:    make(chan struct{}),
	}
	if resource != "" {
		a.status = StatusClaimed
	}
	m.next++
	m.agents[a.id] = a
	m.order = append(m.order, a.id)
	go func() {
		err := cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		if err != nil && code == 0 {
			code = -1
		}
		m.mu.Lock()
		a.exitCode = code
		m.mu.Unlock()
		close(a.exited)
	}()
	return m.snapshotLocked(a), nil
}

// Claim labels an agent as working on resource.
func (m *Manager) Claim(id, resource string) (Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, err := m.lookupLocked(id)
	if err != nil {
		return Snapshot{}, err
	}
	if a.status == StatusReleased {
		return Snapshot{}, &ReleasedAgentError{ID: id}
	}
	a.resource, a.status = resource, StatusClaimed
	return m.snapshotLocked(a), nil
}

// Release kills the agent's process group, waits for the agent to be
// reaped and marks it released. It returns the agent as it was before,
// with the resource it held.
func (m *Manager) Release(id string) (Snapshot, error) {
	m.mu.Lock()
	a, err := m.lookupLocked(id)
	if err != nil {
		m.mu.Unlock()
		return Snapshot{}, err
	}
	before := m.snapshotLocked(a)
	a.status, a.resource = StatusReleased, ""
	m.mu.Unlock()
	kill(a)
	before.Status = StatusReleased
	before.Alive = false
	return before, nil
}

// kill ends the agent's tree and waits (bounded) for the reaper. An
// agent that already exited took its tree with it.
func kill(a *agent) {
	a.cmd.Kill()
	select {
	case <-a.exited:
	case <-time.After(reapWait):
	}
}

// Status returns one agent.
func (m *Manager) Status(id string) (Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, err := m.lookupLocked(id)
	if err != nil {
		return Snapshot{}, err
	}
	return m.snapshotLocked(a), nil
}

// All returns every agent in spawn order.
func (m *Manager) All() []Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Snapshot, 0, len(m.order))
	for _, id := range m.order {
		out = append(out, m.snapshotLocked(m.agents[id]))
	}
	return out
}

// Exited is closed when the agent's process has exited; nil for an
// unknown agent.
func (m *Manager) Exited(id string) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if a, ok := m.agents[id]; ok {
		return a.exited
	}
	return nil
}

// Close releases every agent and refuses new ones.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	var live []*agent
	for _, id := range m.order {
		a := m.agents[id]
		if a.status != StatusReleased {
			a.status, a.resource = StatusReleased, ""
			live = append(live, a)
		}
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, a := range live {
		wg.Add(1)
		go func() {
			defer wg.Done()
			kill(a)
		}()
	}
	wg.Wait()
}

func (m *Manager) lookupLocked(id string) (*agent, error) {
	a, ok := m.agents[id]
	if !ok {
		return nil, &UnknownAgentError{ID: id}
	}
	return a, nil
}

func (m *Manager) snapshotLocked(a *agent) Snapshot {
	s := Snapshot{AgentID: a.id, PID: a.pid, PGID: pgid(a.pid), Status: a.status, SpawnedAt: a.spawnedAt.UnixMilli()}
	if a.resource != "" {
		r := a.resource
		s.Resource = &r
	}
	select {
	case <-a.exited:
		code := a.exitCode
		s.ExitCode = &code
	default:
		s.Alive = a.status != StatusReleased && procgroup.Alive(a.pid)
	}
	return s
}

package workers

import (
	"context"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/session"
)

// Register binds worker_dispatch and worker_context; workers keep state
// under EVOKORE_HOME/workers and run commands from the router's working
// directory with the launcher's base and toolchain allowlists of its
// environment. Call Close at shutdown.
func Register(t *native.Table, dir string, env config.Env) *Manager {
	cwd, err := os.Getwd()
	if err != nil {
		cwd = "."
	}
	m := New(dir, env, cwd)
	t.Bind(native.WorkerDispatch, m.dispatchTool)
	t.Bind(native.WorkerContext, m.contextTool)
	return m
}

func (m *Manager) dispatchTool(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		SessionID  string         `json:"session_id"`
		WorkerType string         `json:"worker_type"`
		Options    map[string]any `json:"options"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	switch {
	case in.SessionID == "":
		return native.MissingArgument("session_id"), nil
	case in.WorkerType == "":
		return native.MissingArgument("worker_type"), nil
	}
	work, err := m.plan(in.WorkerType, in.Options)
	if err != nil {
		return native.Errorf("%s", err.Error()), nil
	}
	id, err := m.start(session.TenantOf(call.Session), in.SessionID, in.WorkerType, in.Options, work)
	if err != nil {
		return native.Errorf("Cannot dispatch the worker: %v", err), nil
	}
	return native.JSON(struct {
		WorkerID   string `json:"workerId"`
		WorkerType string `json:"workerType"`
		SessionID  string `json:"sessionId"`
		Status     string `json:"status"`
		Hint       string `json:"hint"`
	}{id, in.WorkerType, in.SessionID, StatusPending, "Poll worker_context with this workerId to read the result."}), nil
}

func (m *Manager) contextTool(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		SessionID string `json:"session_id"`
		WorkerID  string `json:"worker_id"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	switch {
	case in.SessionID == "":
		return native.MissingArgument("session_id"), nil
	case in.WorkerID == "":
		return native.MissingArgument("worker_id"), nil
	}
	st, ok, err := m.Read(session.TenantOf(call.Session), in.SessionID, in.WorkerID)
	switch {
	case err != nil:
		return native.Errorf("Cannot read worker %s: %v", in.WorkerID, err), nil
	case !ok:
		return native.Errorf("Worker %s not found for session %s.", in.WorkerID, in.SessionID), nil
	}
	return native.JSON(st), nil
}

package fleet

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native"
)

// Register binds the fleet tools to a new fleet whose agents get the
// launcher's allowlists of the router's environment. Call Close at shutdown.
func Register(t *native.Table, env config.Env) *Manager {
	m := New(env)
	t.Bind(native.FleetSpawn, m.spawnTool)
	t.Bind(native.FleetClaim, m.claimTool)
	t.Bind(native.FleetRelease, m.releaseTool)
	t.Bind(native.FleetStatus, m.statusTool)
	return m
}

// failure turns an error into the isError text the model reads.
func failure(err error) *mcp.CallToolResult { return native.Errorf("%s", Message(err)) }

func (m *Manager) spawnTool(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		Command  string   `json:"command"`
		Args     []string `json:"args"`
		Resource string   `json:"resource"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	if in.Command == "" {
		return native.MissingArgument("command"), nil
	}
	s, err := m.Spawn(in.Command, in.Args, in.Resource)
	if err != nil {
		return failure(err), nil
	}
	return native.JSON(struct {
		AgentID  string  `json:"agentId"`
		PID      int     `json:"pid"`
		Status   string  `json:"status"`
		Resource *string `json:"resource"`
	}{s.AgentID, s.PID, s.Status, s.Resource}), nil
}

func (m *Manager) claimTool(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		AgentID  string `json:"agentId"`
		Resource string `json:"resource"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	switch {
	case in.AgentID == "":
		return native.MissingArgument("agentId"), nil
	case in.Resource == "":
		return native.MissingArgument("resource"), nil
	}
	s, err := m.Claim(in.AgentID, in.Resource)
	if err != nil {
		return failure(err), nil
	}
	return native.JSON(struct {
		AgentID  string `json:"agentId"`
		Resource string `json:"resource"`
		Status   string `json:"status"`
	}{s.AgentID, in.Resource, s.Status}), nil
}

func (m *Manager) releaseTool(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		AgentID string `json:"agentId"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	if in.AgentID == "" {
		return native.MissingArgument("agentId"), nil
	}
	s, err := m.Release(in.AgentID)
	if err != nil {
		return failure(err), nil
	}
	return native.JSON(struct {
		AgentID  string  `json:"agentId"`
		Status   string  `json:"status"`
		Resource *string `json:"resource"`
	}{s.AgentID, StatusReleased, s.Resource}), nil
}

func (m *Manager) statusTool(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		AgentID string `json:"agentId"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	if in.AgentID != "" {
		s, err := m.Status(in.AgentID)
		if err != nil {
			return failure(err), nil
		}
		return native.JSON(s), nil
	}
	all := m.All()
	return native.JSON(struct {
		Count  int        `json:"count"`
		Agents []Snapshot `json:"agents"`
	}{len(all), all}), nil
}

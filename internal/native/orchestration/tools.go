package orchestration

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/native/claims"
	"github.com/evokore/evokore/internal/native/fleet"
)

// Register binds the orchestration tools to a runtime over the fleet and
// the claims store. Call Close at shutdown, before the fleet's.
func Register(t *native.Table, f *fleet.Manager, c *claims.Store) *Runtime {
	rt := New(f, c)
	t.Bind(native.OrchestrationStart, rt.startTool)
	t.Bind(native.OrchestrationStop, rt.stopTool)
	t.Bind(native.OrchestrationStatus, rt.statusTool)
	return rt
}

func failure(err error) *mcp.CallToolResult { return native.Errorf("%s", Message(err)) }

func (rt *Runtime) startTool(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		Name   string      `json:"name"`
		Agents []AgentSpec `json:"agents"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	if in.Name == "" {
		return native.Errorf("Missing required argument: name"), nil
	}
	if len(in.Agents) == 0 {
		return native.Errorf("Missing required argument: agents (non-empty array)"), nil
	}
	for i, a := range in.Agents {
		if a.Command == "" {
			return native.Errorf("Missing required argument: agents[%d].command", i), nil
		}
	}
	r, err := rt.Start(in.Name, in.Agents)
	if err != nil {
		var se *StartError
		if errors.As(err, &se) {
			return native.Errorf("%s", rolledBack(se)), nil
		}
		return failure(err), nil
	}
	return native.JSON(r), nil
}

// rolledBack names the failure first, so the model reads why before the
// record it can inspect.
func rolledBack(se *StartError) string {
	msg := Message(se)
	return fmt.Sprintf("%s\nEvery agent it had started was stopped and every claim released; orchestration_status %s shows the record.", msg, se.Run.RunID)
}

func (rt *Runtime) stopTool(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		RunID string `json:"runId"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	if in.RunID == "" {
		return native.Errorf("Missing required argument: runId"), nil
	}
	r, err := rt.Stop(in.RunID)
	if err != nil {
		return failure(err), nil
	}
	return native.JSON(r), nil
}

func (rt *Runtime) statusTool(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		RunID string `json:"runId"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	if in.RunID != "" {
		r, err := rt.Status(in.RunID)
		if err != nil {
			return failure(err), nil
		}
		return native.JSON(r), nil
	}
	return native.JSON(struct {
		Runs []Run `json:"runs"`
	}{rt.All()}), nil
}

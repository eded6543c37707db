package claims

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native"
)

// Register binds the four claim tools and returns the store they use.
func Register(t *native.Table, dir string) *Store {
	s := NewStore(dir)
	t.Bind(native.ClaimAcquire, s.acquireTool)
	t.Bind(native.ClaimRelease, s.releaseTool)
	t.Bind(native.ClaimList, s.listTool)
	t.Bind(native.ClaimSweep, s.sweepTool)
	return s
}

// clientPID is the process a claim_acquire claim belongs to: the client
// that started the router.
func clientPID() int { return os.Getppid() }

func (s *Store) acquireTool(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		Resource string `json:"resource"`
		AgentID  string `json:"agentId"`
		TTLMs    int64  `json:"ttlMs"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	switch {
	case in.Resource == "":
		return native.MissingArgument("resource"), nil
	case in.AgentID == "":
		return native.MissingArgument("agentId"), nil
	}
	c, err := s.Acquire(in.Resource, in.AgentID, time.Duration(in.TTLMs)*time.Millisecond, clientPID())
	if err != nil {
		return native.Errorf("%s", err.Error()), nil
	}
	return native.JSON(c), nil
}

func (s *Store) releaseTool(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		Resource string `json:"resource"`
		AgentID  string `json:"agentId"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	switch {
	case in.Resource == "":
		return native.MissingArgument("resource"), nil
	case in.AgentID == "":
		return native.MissingArgument("agentId"), nil
	}
	ok, err := s.Release(in.Resource, in.AgentID)
	if err != nil {
		return native.Errorf("%s", err.Error()), nil
	}
	return native.JSON(map[string]bool{"released": ok}), nil
}

func (s *Store) listTool(context.Context, *native.Call) (*mcp.CallToolResult, error) {
	list, err := s.List()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return native.Errorf("%s", err.Error()), nil
	}
	if list == nil {
		list = []Status{}
	}
	return native.JSON(map[string]any{"claims": list}), nil
}

func (s *Store) sweepTool(context.Context, *native.Call) (*mcp.CallToolResult, error) {
	swept, alive, err := s.Sweep()
	if err != nil {
		return native.Errorf("%s", err.Error()), nil
	}
	return native.JSON(map[string]int{"swept": swept, "alive": alive}), nil
}

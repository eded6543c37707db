// Command taskfixture is a child MCP server of ordinary tools, over stdio,
// for the tasks that evokore runs on behalf of children (package tasks):
// the tools the conformance suite's tasks scenarios call, and a counter
// for the tests. It knows nothing of tasks: it speaks both protocol eras
// as every go-sdk server does, a slow tool is slow, a tool that needs the
// user's input asks for it the sessionless way (input_required, answered
// by the retry). Which of its tools run as tasks is the router's
// configuration (a server's "tasks" in mcp.config.json).
//
//	greet {name}               "Hello, <name>!"
//	slow_compute {seconds,     sleeps seconds (honouring cancellation),
//	  label}                   then "computed <label> in <seconds>s"
//	failing_job {}             after a second, a tool error (isError)
//	protocol_error_job {}      after a second, a JSON-RPC error
//	confirm_delete {filename}  after a second (it looks for the file), asks
//	                           to confirm (one form field, confirm); the
//	                           retry answers "deleted <filename>" or
//	                           "kept <filename>"
//	multi_input {}             after a second, asks two questions at once
//	                           (name, confirm); the retry greets the name
//	test_tool_with_task {}     asks for a name at once; the retry answers
//	                           "Hello, <name>! (gathered before the task)"
//	cancelled {}               "cancelled: <n>", the slow_compute calls
//	                           whose client cancelled them
package main

import (
	"context"
	"fmt"
	"log"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var cancelled atomic.Int64

type (
	empty   struct{}
	greetIn struct {
		Name string `json:"name"`
	}
	computeIn struct {
		Seconds float64 `json:"seconds"`
		Label   string  `json:"label,omitempty"`
	}
	fileIn struct {
		Filename string `json:"filename"`
	}
)

func text(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// form asks for the named fields (strings, confirm a boolean).
func form(message string, fields ...string) *mcp.ElicitParams {
	props := map[string]any{}
	for _, f := range fields {
		if f == "confirm" {
			props[f] = map[string]any{"type": "boolean"}
		} else {
			props[f] = map[string]any{"type": "string"}
		}
	}
	return &mcp.ElicitParams{Mode: "form", Message: message, RequestedSchema: map[string]any{"type": "object", "properties": props}}
}

// answers is what the retry of a call that asked carries: the content of
// each accepted answer, by key.
func answers(req *mcp.CallToolRequest) (map[string]map[string]any, bool) {
	if req.Params.InputResponses == nil {
		return nil, false
	}
	out := map[string]map[string]any{}
	for k, v := range req.Params.InputResponses {
		if r, ok := v.(*mcp.ElicitResult); ok && r.Action == "accept" {
			out[k] = r.Content
		} else {
			out[k] = nil
		}
	}
	return out, true
}

// pause sleeps d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "taskfixture", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets someone at once."}, func(_ context.Context, _ *mcp.CallToolRequest, in greetIn) (*mcp.CallToolResult, any, error) {
		return text("Hello, %s!", in.Name), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow_compute", Description: "Computes for a number of seconds."}, func(ctx context.Context, _ *mcp.CallToolRequest, in computeIn) (*mcp.CallToolResult, any, error) {
		if err := pause(ctx, time.Duration(in.Seconds*float64(time.Second))); err != nil {
			cancelled.Add(1)
			return nil, nil, err
		}
		return text("computed %s in %gs", in.Label, in.Seconds), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "failing_job", Description: "Runs a job that fails."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		if err := pause(ctx, time.Second); err != nil {
			return nil, nil, err
		}
		res := text("the job failed: no such input")
		res.IsError = true
		return res, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "protocol_error_job", Description: "Runs a job that breaks."}, func(ctx context.Context, _ *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		if err := pause(ctx, time.Second); err != nil {
			return nil, nil, err
		}
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the job broke"}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "confirm_delete", Description: "Deletes a file once the user confirms."}, func(ctx context.Context, req *mcp.CallToolRequest, in fileIn) (*mcp.CallToolResult, any, error) {
		got, retried := answers(req)
		if !retried {
			if err := pause(ctx, time.Second); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"confirm": form("Delete "+in.Filename+"?", "confirm")}}, nil, nil
		}
		if c := got["confirm"]; c != nil && c["confirm"] == true {
			return text("deleted %s", in.Filename), nil, nil
		}
		return text("kept %s", in.Filename), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "multi_input", Description: "Asks two questions at once."}, func(ctx context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		got, retried := answers(req)
		if !retried {
			if err := pause(ctx, time.Second); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
				"name":    form("Your name?", "name"),
				"confirm": form("Go on?", "confirm"),
			}}, nil, nil
		}
		return text("Hello, %v! (answers: %s)", got["name"]["name"], keys(got)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "test_tool_with_task", Description: "Asks for a name, then greets it."}, func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		got, retried := answers(req)
		if !retried {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"user_name": form("Your name?", "name")}}, nil, nil
		}
		var names []string
		for _, content := range got {
			for _, v := range content {
				names = append(names, fmt.Sprint(v))
			}
		}
		sort.Strings(names)
		return text("Hello, %s! (gathered before the task)", strings.Join(names, ", ")), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "cancelled", Description: "Counts the slow_compute calls cancelled."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return text("cancelled: %d", cancelled.Load()), nil, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

func keys(m map[string]map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

// Package handshake is the router's initialize answer as the go-sdk gives
// it: the server identity every session shares (Options) and the SDK's
// answer to one initialize request for that identity (Answer).
//
// It is the one place both consumers of that answer get it from: the
// router's sessions and its in-process early greeting (package server).
package handshake

//lint:file-ignore SA1019 logging passes through on purpose; see docs/decisions.md

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options are a session's server options as initialize reports them:
// instructions and capabilities, nothing that depends on configuration.
// Each call returns new options, for the caller to add its handlers to.
func Options(instructions string) *mcp.ServerOptions {
	return &mcp.ServerOptions{
		Instructions: instructions,
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Logging:     &mcp.LoggingCapabilities{},
			Completions: &mcp.CompletionCapabilities{},
			// The router serves MCP tasks itself (package tasks): the
			// extension of 2026-07-28 here, the experimental capability of
			// 2025-11-25 by Middleware.
			// It serves the Skills Extension (SEP-2640) too, with
			// resources/directory/read.
			Extensions: map[string]any{tasksExtension: map[string]any{}, skillsExtension: map[string]any{"directoryRead": true}},
		},
	}
}

// tasksExtension names the tasks extension (2026-07-28).
const tasksExtension = "io.modelcontextprotocol/tasks"

// skillsExtension names the Skills Extension (SEP-2640); package skills
// has it too, which this package does not import.
const skillsExtension = "io.modelcontextprotocol/skills"

// legacyTasks is the tasks capability of 2025-11-25: tasks/list,
// tasks/cancel and task-augmented tools/call. The go-sdk's capabilities
// have no field for it.
var legacyTasks = json.RawMessage(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`)

// Middleware adds the 2025-11-25 tasks capability to an initialize
// answer of that protocol version (the sessionless era has no initialize,
// and declares the extension instead). Every session's server and Answer
// use it, so both answers agree.
func Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if ir, ok := res.(*mcp.InitializeResult); ok && err == nil && ir.ProtocolVersion == "2025-11-25" {
			return withTasks{ir}, nil
		}
		return res, err
	}
}

// withTasks is an initialize result whose capabilities say tasks.
type withTasks struct{ *mcp.InitializeResult }

func (r withTasks) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.InitializeResult)
	if err != nil {
		return nil, err
	}
	var res, caps map[string]json.RawMessage
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(res["capabilities"], &caps); err != nil || caps == nil {
		caps = map[string]json.RawMessage{}
	}
	caps["tasks"] = legacyTasks
	if res["capabilities"], err = json.Marshal(caps); err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// timeout bounds Answer's in-memory exchange; it only fails to finish if
// the SDK misbehaves.
const timeout = 2 * time.Second

// Answer returns the encoded answer a server with impl and Options
// (instructions), nothing registered, gives to the initialize request
// msg, exchanged with the SDK over in-memory transports, so protocol
// version negotiation and every field are the SDK's. It returns nil if
// the exchange fails or the SDK's answer is not a response.
func Answer(impl *mcp.Implementation, instructions string, msg jsonrpc.Message) []byte {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ct, st := mcp.NewInMemoryTransports()
	srv := mcp.NewServer(impl, Options(instructions))
	srv.AddReceivingMiddleware(Middleware)
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		return nil
	}
	defer ss.Close()
	conn, err := ct.Connect(ctx)
	if err != nil {
		return nil
	}
	defer conn.Close()
	if err := conn.Write(ctx, msg); err != nil {
		return nil
	}
	answer, err := conn.Read(ctx)
	if err != nil {
		return nil
	}
	if _, ok := answer.(*jsonrpc.Response); !ok {
		return nil
	}
	data, err := jsonrpc.EncodeMessage(answer)
	if err != nil {
		return nil
	}
	return data
}

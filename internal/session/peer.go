package session

//lint:file-ignore SA1019 sampling, roots and logging pass through on purpose; see docs/decisions.md

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Peer is the client end of a session, as the router needs it: to pass
// progress, log messages and a child's requests through to the client.
// *mcp.ServerSession implements it.
type Peer interface {
	NotifyProgress(ctx context.Context, params *mcp.ProgressNotificationParams) error
	Log(ctx context.Context, params *mcp.LoggingMessageParams) error
	CreateMessage(ctx context.Context, params *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	Elicit(ctx context.Context, params *mcp.ElicitParams) (*mcp.ElicitResult, error)
	ListRoots(ctx context.Context, params *mcp.ListRootsParams) (*mcp.ListRootsResult, error)
	InitializeParams() *mcp.InitializeParams
}

// RequestPeer is the client of one sessionless request (MCP 2026-07-28)
// that a transport answers itself, from rawMeta, the request's _meta as
// the client sent it (nil when it sent none): what it declares there
// (protocol, capabilities, client), and no way to send it anything, as
// such a request has no stream for a call that asked for none (the
// policy then asks for an approval by input_required, which needs none).
// false means rawMeta does not decode.
func RequestPeer(rawMeta []byte) (Peer, bool) {
	var m struct {
		Version string                  `json:"io.modelcontextprotocol/protocolVersion"`
		Caps    *mcp.ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities"`
		Client  *mcp.Implementation     `json:"io.modelcontextprotocol/clientInfo"`
	}
	if rawMeta != nil && json.Unmarshal(rawMeta, &m) != nil {
		return nil, false
	}
	return &requestPeer{mcp.InitializeParams{ProtocolVersion: m.Version, Capabilities: m.Caps, ClientInfo: m.Client}}, true
}

type requestPeer struct{ params mcp.InitializeParams }

var errNoStream = errors.New("a sessionless request without a stream cannot be sent requests")

func (p *requestPeer) InitializeParams() *mcp.InitializeParams { return &p.params }
func (p *requestPeer) NotifyProgress(context.Context, *mcp.ProgressNotificationParams) error {
	return nil
}
func (p *requestPeer) Log(context.Context, *mcp.LoggingMessageParams) error { return nil }
func (p *requestPeer) CreateMessage(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	return nil, errNoStream
}
func (p *requestPeer) Elicit(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return nil, errNoStream
}
func (p *requestPeer) ListRoots(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	return nil, errNoStream
}

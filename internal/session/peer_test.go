package session

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A sessionless request's peer is what its _meta declares, and cannot be
// sent a request: there is no stream to send it on.
func TestRequestPeerIsWhatMetaDeclares(t *testing.T) {
	p, ok := RequestPeer([]byte(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"traceparent":"x"}`))
	if !ok {
		t.Fatal("the _meta triple did not decode")
	}
	ip := p.InitializeParams()
	if ip.ProtocolVersion != "2026-07-28" || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil || ip.ClientInfo == nil || ip.ClientInfo.Name != "c" {
		t.Errorf("InitializeParams = %+v", ip)
	}
	if _, err := p.Elicit(context.Background(), &mcp.ElicitParams{Message: "m"}); err == nil {
		t.Error("a sessionless request's peer was sent an elicitation")
	}
	if p.NotifyProgress(context.Background(), &mcp.ProgressNotificationParams{}) != nil {
		t.Error("progress to a peer without a stream is an error; it should go nowhere")
	}

	if p, ok := RequestPeer(nil); !ok {
		t.Error("a request without _meta gave no peer")
	} else if ip := p.InitializeParams(); ip.ProtocolVersion != "" || ip.Capabilities != nil || ip.ClientInfo != nil {
		t.Errorf("a request without _meta declared %+v", ip)
	}
	if _, ok := RequestPeer([]byte(`{"io.modelcontextprotocol/clientInfo":"not an object"}`)); ok {
		t.Error("a _meta that does not decode gave a peer")
	}
}

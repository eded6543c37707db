package routing

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/status"
)

// whyProjection is a Projection with children, for whyNot alone.
type whyProjection struct {
	snap     *catalog.Snapshot
	children []status.Server
}

func (p whyProjection) Snapshot() *catalog.Snapshot                  { return p.snap }
func (p whyProjection) Legacy() bool                                 { return true }
func (p whyProjection) Listed(*session.Session, *catalog.Entry) bool { return true }
func (p whyProjection) Status() []status.Server                      { return p.children }

// A server whose tools do not start with "<id>_" (a custom or empty
// prefix) is still named when it is not ready: for a tool the catalog
// holds by the tool's server, else by the server's prefix.
func TestWhyNotNamesAServerWithACustomPrefix(t *testing.T) {
	store := catalog.NewStore(nil, []string{"slow"})
	store.SetServerEntries("slow", catalog.PrefixedEntries("slow", "sp_", []*mcp.Tool{{Name: "echo", Description: "Echoes the message back."}}))
	p := whyProjection{snap: store.Snapshot(), children: []status.Server{{ID: "slow", Status: status.Error, LastError: "exited", RegisteredToolCount: 1}}}
	sess := session.New("s", "")
	if got := whyNot(p, sess, "weather", "sp_echo", 3, nil); !strings.Contains(got, "server slow is not ready (error: exited)") {
		t.Errorf("known tool: %s", got)
	}
	p.children[0].NamePrefix = "sp_"
	if got := whyNot(p, sess, "weather", "sp_other", 3, nil); !strings.Contains(got, "server slow is not ready") {
		t.Errorf("unknown tool with the prefix: %s", got)
	}
	if got := whyNot(p, sess, "weather", "xx_other", 3, nil); strings.Contains(got, "server slow") {
		t.Errorf("unknown tool of another prefix: %s", got)
	}
}

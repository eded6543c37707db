package routing

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/search"
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

// With semantic reranking, why_not ranks a tool in the reranked order the
// model was shown, not the lexical one: for "the zebra" the tool zebra is
// lexically first, but the embeddings put zebra_helper first, so with a
// limit of 1 zebra is ranked 2.
func TestWhyNotRanksInTheRerankedOrder(t *testing.T) {
	// A text's vector: [1 0] for the helper, [1 1] for the stripes, [0 1]
	// otherwise; the query "the zebra" is [1 0].
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type datum struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var out struct {
			Data []datum `json:"data"`
		}
		for i, text := range req.Input {
			v := []float32{0, 1}
			switch {
			case text == "the zebra" || strings.Contains(text, "helper"):
				v = []float32{1, 0}
			case strings.Contains(text, "stripes"):
				v = []float32{1, 1}
			}
			out.Data = append(out.Data, datum{i, v})
		}
		json.NewEncoder(w).Encode(out)
	}))
	defer srv.Close()
	sem := search.NewSemantic(srv.URL, "fake", "")

	store := catalog.NewStore(nil, []string{"zoo"})
	store.SetServerEntries("zoo", catalog.PrefixedEntries("zoo", "", []*mcp.Tool{
		{Name: "zebra", Description: "A zebra."},
		{Name: "zebra_helper", Description: "Helps with a zebra."},
		{Name: "stripes", Description: "The stripes of a zebra."},
	}))
	p := whyProjection{snap: store.Snapshot()}
	var lexical []string
	for _, m := range p.snap.Search("the zebra", 3) {
		lexical = append(lexical, m.Entry.Name)
	}
	if strings.Join(lexical, " ") != "zebra zebra_helper stripes" {
		t.Fatalf("lexical order %v; the test needs zebra, zebra_helper, stripes", lexical)
	}
	args, _ := json.Marshal(map[string]any{"query": "the zebra", "limit": 1, "explain": "zebra"})
	res, err := discoverTools(p, sem)(context.Background(), &native.Call{Args: args, Session: session.New("s", "")})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, "- zebra_helper [") || !strings.Contains(text, "Why not zebra: ranked 2, below the limit of 1") {
		t.Errorf("discover_tools:\n%s", text)
	}
}

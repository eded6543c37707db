package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// embeddingsEndpoint is an OpenAI-compatible /v1/embeddings endpoint on
// loopback that answers every input with a small vector derived from its
// letters, or fails with 503 when down is set.
func embeddingsEndpoint(t *testing.T, down *atomic.Bool, asked *atomic.Int64) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if down.Load() || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
			return
		}
		asked.Add(int64(len(req.Input)))
		type datum struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var out struct {
			Data []datum `json:"data"`
		}
		for i, text := range req.Input {
			v := make([]float32, 26)
			for _, c := range strings.ToLower(text) {
				if c >= 'a' && c <= 'z' {
					v[c-'a']++
				}
			}
			out.Data = append(out.Data, datum{i, v})
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func serverStatus(t *testing.T, cs *mcp.ClientSession) map[string]any {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "evokore://server/status"})
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestSemanticRerankingThroughTheRouter configures discovery.embeddings,
// searches, and watches the status resource: on and caching while the
// endpoint answers, a visible lexical fallback once it fails, with the
// same answers either way.
func TestSemanticRerankingThroughTheRouter(t *testing.T) {
	var down atomic.Bool
	var asked atomic.Int64
	url := embeddingsEndpoint(t, &down, &asked)
	dir := t.TempDir()
	cfg := map[string]any{
		"servers":   map[string]any{"fx": routertest.Fixture(t)},
		"discovery": map[string]any{"embeddings": map[string]any{"url": url, "model": "letters"}},
	}
	h := routertest.NewWithConfig(t, dir, testutil.WriteJSON(t, dir, "mcp.config.json", cfg), nil)
	cs := h.Connect(nil)
	h.Booted()

	if st := serverStatus(t, cs)["semanticSearch"]; st != "on (model letters, not used yet)" {
		t.Fatalf("before any search: %v", st)
	}
	text := routertest.Text(routertest.Call(t, cs, "discover_tools", map[string]any{"query": "counts calls"}))
	if !strings.Contains(text, "- fx_count [proxy, server=fx,") || !strings.Contains(text, "- fx_read_count [proxy, server=fx,") {
		t.Fatalf("discover with reranking:\n%s", text)
	}
	st, _ := serverStatus(t, cs)["semanticSearch"].(string)
	if !strings.HasPrefix(st, "on (model letters, ") || asked.Load() == 0 {
		t.Fatalf("after a search: %q (endpoint asked for %d vectors)", st, asked.Load())
	}
	cached, _ := filepath.Glob(filepath.Join(dir, "home", "embeddings", "*", "*.json"))
	if len(cached) == 0 {
		t.Fatal("no vector cached under EVOKORE_HOME/embeddings")
	}
	skillText, _ := routertest.CallText(t, cs, "search_skills", map[string]any{"query": "review a pull request", "limit": 3})
	if !strings.HasPrefix(skillText, "- **pr-review** ") {
		t.Errorf("search_skills with reranking:\n%s", skillText)
	}

	down.Store(true)
	again := routertest.Text(routertest.Call(t, cs, "discover_tools", map[string]any{"query": "reads the call count please"}))
	if !strings.Contains(again, "- fx_read_count [proxy, server=fx,") {
		t.Fatalf("lexical fallback still answers:\n%s", again)
	}
	if st := serverStatus(t, cs)["semanticSearch"]; st != "lexical fallback: embeddings endpoint answered 503 Service Unavailable" {
		t.Fatalf("after the endpoint failed: %v", st)
	}
	if _, err := os.Stat(filepath.Join(dir, "home", "embeddings")); err != nil {
		t.Fatal(err)
	}
}

package search

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/safefile"
)

// Semantic reranks lexical candidates with an OpenAI-compatible
// embeddings endpoint (Ollama, a llama.cpp server, a hosted API). It is
// off unless mcp.config.json sets discovery.embeddings; every failure
// falls back to the lexical order, and Status says so.
//
// Document vectors are cached by the hash of model and text, in memory
// and as files under a directory (EVOKORE_HOME/embeddings), so a tool or
// skill is embedded once per definition, not per query.
type Semantic struct {
	endpoint, model, dir string
	client               *http.Client

	mu     sync.Mutex
	mem    map[string][]float32
	status string
	// queries caches recent query vectors: the same question is often
	// asked twice in a row.
	queries map[string][]float32
}

// SemanticDoc is one candidate to rerank: the text that describes it (a
// tool's name, title and description; a skill's name, description and
// tags).
type SemanticDoc struct {
	Text string
}

const (
	// rrfK is reciprocal-rank fusion's constant: a document's fused score
	// is the sum over rankings of 1/(rrfK + rank).
	rrfK = 60
	// semanticTimeout bounds one call to the endpoint; a slow endpoint
	// must not make search slow.
	semanticTimeout = 3 * time.Second
	// maxResponse bounds an endpoint's answer.
	maxResponse = 64 << 20
	// maxQueryCache bounds the query vectors kept.
	maxQueryCache = 256
)

// NewSemantic returns a reranker for the endpoint, or nil when url or
// model is empty (semantic reranking off). A url that does not end in
// "/embeddings" gets "/v1/embeddings" appended. dir caches vectors; ""
// keeps them in memory only.
func NewSemantic(url, model, dir string) *Semantic {
	url, model = strings.TrimSpace(url), strings.TrimSpace(model)
	if url == "" || model == "" {
		return nil
	}
	if !strings.HasSuffix(strings.TrimRight(url, "/"), "/embeddings") {
		url = strings.TrimRight(url, "/") + "/v1/embeddings"
	}
	return &Semantic{
		endpoint: url, model: model, dir: dir,
		client:  &http.Client{Timeout: semanticTimeout},
		mem:     map[string][]float32{},
		queries: map[string][]float32{},
		status:  fmt.Sprintf("on (model %s, not used yet)", model),
	}
}

// Status is what evokore://server/status shows: "off", "on (...)" or
// "lexical fallback: <why>".
func (s *Semantic) Status() string {
	if s == nil {
		return "off"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

func (s *Semantic) setStatus(format string, args ...any) {
	s.mu.Lock()
	s.status = fmt.Sprintf(format, args...)
	s.mu.Unlock()
}

// Rerank orders docs, given best first by the lexical ranker, by
// reciprocal-rank fusion of that order and their similarity to query. It
// returns the new order as indexes into docs; on any failure it returns
// the lexical order and records why in Status.
func (s *Semantic) Rerank(ctx context.Context, query string, docs []SemanticDoc) []int {
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	if s == nil || len(docs) < 2 {
		return order
	}
	vecs, err := s.vectors(ctx, query, docs)
	if err != nil {
		s.setStatus("lexical fallback: %v", err)
		return order
	}
	q := vecs[0]
	sim := make([]float64, len(docs))
	for i := range docs {
		sim[i] = cosine(q, vecs[i+1])
	}
	semRank := slices.Clone(order)
	slices.SortStableFunc(semRank, func(a, b int) int {
		switch {
		case sim[a] > sim[b]:
			return -1
		case sim[a] < sim[b]:
			return 1
		}
		return 0
	})
	fused := make([]float64, len(docs))
	for rank, d := range order {
		fused[d] += 1 / float64(rrfK+rank+1)
	}
	for rank, d := range semRank {
		fused[d] += 1 / float64(rrfK+rank+1)
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case fused[a] > fused[b]:
			return -1
		case fused[a] < fused[b]:
			return 1
		}
		return a - b
	})
	s.mu.Lock()
	s.status = fmt.Sprintf("on (model %s, %d vectors cached)", s.model, len(s.mem))
	s.mu.Unlock()
	return order
}

// vectors returns the query's vector, then each doc's, fetching what no
// cache holds in one request.
func (s *Semantic) vectors(ctx context.Context, query string, docs []SemanticDoc) ([][]float32, error) {
	out := make([][]float32, len(docs)+1)
	keys := make([]string, len(docs))
	var missing []int // -1 is the query
	s.mu.Lock()
	if v, ok := s.queries[query]; ok {
		out[0] = v
	} else {
		missing = append(missing, -1)
	}
	for i, d := range docs {
		keys[i] = s.key(d.Text)
		if v, ok := s.mem[keys[i]]; ok {
			out[i+1] = v
		}
	}
	s.mu.Unlock()
	for i := range docs {
		if out[i+1] == nil {
			if v := s.readCache(keys[i]); v != nil {
				out[i+1] = v
				s.mu.Lock()
				s.mem[keys[i]] = v
				s.mu.Unlock()
			} else {
				missing = append(missing, i)
			}
		}
	}
	if len(missing) > 0 {
		inputs := make([]string, len(missing))
		for j, i := range missing {
			if i < 0 {
				inputs[j] = query
			} else {
				inputs[j] = docs[i].Text
			}
		}
		got, err := s.embed(ctx, inputs)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		for j, i := range missing {
			if i < 0 {
				out[0] = got[j]
				if len(s.queries) >= maxQueryCache {
					clear(s.queries)
				}
				s.queries[query] = got[j]
				continue
			}
			out[i+1] = got[j]
			s.mem[keys[i]] = got[j]
		}
		s.mu.Unlock()
		for j, i := range missing {
			if i >= 0 {
				s.writeCache(keys[i], got[j])
			}
		}
	}
	dim := len(out[0])
	for _, v := range out {
		if len(v) != dim || dim == 0 {
			return nil, errors.New("the endpoint returned vectors of different lengths")
		}
	}
	return out, nil
}

// key is a definition's cache key: the hash of model and text.
func (s *Semantic) key(text string) string {
	h := sha256.Sum256([]byte(s.model + "\x00" + text))
	return hex.EncodeToString(h[:])
}

func (s *Semantic) cachePath(key string) string {
	return filepath.Join(s.dir, key[:2], key+".json")
}

// readCache loads a cached vector; a missing, unreadable or malformed
// file (files under EVOKORE_HOME are hostile too) is a miss.
func (s *Semantic) readCache(key string) []float32 {
	if s.dir == "" {
		return nil
	}
	raw, err := safefile.Load(s.cachePath(key), maxResponse)
	if err != nil || len(raw) > maxResponse {
		return nil
	}
	var v []float32
	if json.Unmarshal(raw, &v) != nil || len(v) == 0 {
		return nil
	}
	return v
}

// writeCache stores a vector, atomically; failing to is no error, the
// vector is fetched again next time.
func (s *Semantic) writeCache(key string, v []float32) {
	if s.dir == "" {
		return
	}
	path := s.cachePath(key)
	if os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".vec-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(raw)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}

// embed asks the endpoint for one vector per input.
func (s *Semantic) embed(ctx context.Context, inputs []string) ([][]float32, error) {
	body, err := json.Marshal(map[string]any{"model": s.model, "input": inputs})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, semanticTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embeddings endpoint: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, fmt.Errorf("embeddings endpoint: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("embeddings endpoint answered %s", resp.Status)
	}
	var parsed struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &parsed); err != nil {
		return nil, fmt.Errorf("embeddings endpoint: malformed answer: %w", err)
	}
	out := make([][]float32, len(inputs))
	for _, d := range parsed.Data {
		if d.Index < 0 || d.Index >= len(out) || out[d.Index] != nil || len(d.Embedding) == 0 {
			return nil, errors.New("embeddings endpoint: answer does not match the inputs")
		}
		out[d.Index] = d.Embedding
	}
	for _, v := range out {
		if v == nil {
			return nil, fmt.Errorf("embeddings endpoint: %d vectors for %d inputs", len(parsed.Data), len(inputs))
		}
	}
	return out, nil
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	r := dot / math.Sqrt(na*nb)
	if math.IsNaN(r) {
		return 0
	}
	return r
}

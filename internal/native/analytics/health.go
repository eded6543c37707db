package analytics

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/evokore/evokore/internal/safefile"
)

// Sonnet prices in USD per million tokens.
const (
	priceCacheRead  = 0.30
	priceCacheWrite = 3.75
	priceInput      = 3.00
	priceOutput     = 15.00
)

// Context sizes at which compacting is suggested, in tokens.
const (
	compactConsider    = 40_000
	compactRecommended = 60_000
	compactStrongly    = 80_000
)

// Tokens is the context of the latest turn.
type Tokens struct {
	CacheRead      int64 `json:"cache_read"`
	CacheCreation  int64 `json:"cache_creation"`
	Input          int64 `json:"input"`
	Output         int64 `json:"output"`
	TotalEstimated int64 `json:"total_estimated"`
}

// Health is session_context_health's answer.
type Health struct {
	SessionID         string  `json:"session_id"`
	SessionFile       string  `json:"session_file"`
	TurnCount         int     `json:"turn_count"`
	ContextTokens     Tokens  `json:"context_tokens"`
	CostPerTurnUSD    float64 `json:"cost_per_turn_usd"`
	ProjectedCost100  float64 `json:"projected_cost_next_100_turns_usd"`
	CompactSuggested  bool    `json:"compact_suggested"`
	CompactReason     string  `json:"compact_reason"`
	CacheHitRatePct   float64 `json:"cache_hit_rate_pct"`
	LastTurnTimestamp *string `json:"last_turn_timestamp"`
}

// errNoUsage is a transcript without any message.usage.
var errNoUsage = errors.New("no usage")

// Limits on what one call reads from one file, so that no file, however
// large or strange, can exhaust the router.
const (
	maxFileBytes = 512 << 20
	// maxLineBytes bounds one JSON record; a longer one is skipped.
	maxLineBytes = 8 << 20
)

// openFile opens a transcript or a session record through safefile.
// Both are the user's own files, under folders the router chose.
func openFile(path string) (*safefile.File, error) {
	return safefile.Open(path, safefile.Options{MaxBytes: maxFileBytes})
}

// eachJSONLine calls fn with every non-blank line of r that is valid JSON
// and within maxLineBytes. line is only valid during the call.
func eachJSONLine(r io.Reader, fn func(line []byte)) error {
	return safefile.ScanLines(r, maxLineBytes, func(_ int, line []byte, cut bool) bool {
		if t := bytes.TrimSpace(line); !cut && len(t) > 0 && json.Valid(t) {
			fn(t)
		}
		return true
	})
}

// readHealth finds the last message.usage in a transcript.
func readHealth(ctx context.Context, f *safefile.File, path string) (*Health, error) {
	type usage struct {
		CacheRead   *float64 `json:"cache_read_input_tokens"`
		CacheCreate *float64 `json:"cache_creation_input_tokens"`
		Input       *float64 `json:"input_tokens"`
		Output      *float64 `json:"output_tokens"`
	}
	var (
		last  *usage
		stamp *string
		turns int
	)
	err := eachJSONLine(f.Reader(ctx), func(line []byte) {
		turns++
		var rec struct {
			Timestamp any `json:"timestamp"`
			Message   *struct {
				Usage *usage `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Message == nil || rec.Message.Usage == nil {
			return
		}
		last, stamp = rec.Message.Usage, nil
		if s, ok := rec.Timestamp.(string); ok {
			stamp = &s
		}
	})
	if err != nil {
		return nil, err
	}
	if last == nil {
		return nil, errNoUsage
	}
	n := func(p *float64) int64 {
		if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
			return 0
		}
		return int64(*p)
	}
	t := Tokens{CacheRead: n(last.CacheRead), CacheCreation: n(last.CacheCreate), Input: n(last.Input), Output: n(last.Output)}
	t.TotalEstimated = t.CacheRead + t.CacheCreation + t.Input + t.Output
	cost := (float64(t.CacheRead)*priceCacheRead + float64(t.CacheCreation)*priceCacheWrite +
		float64(t.Input)*priceInput + float64(t.Output)*priceOutput) / 1e6
	h := &Health{
		SessionID:         strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)),
		SessionFile:       path,
		TurnCount:         turns,
		ContextTokens:     t,
		CostPerTurnUSD:    round(cost, 4),
		ProjectedCost100:  round(cost*100, 2),
		LastTurnTimestamp: stamp,
	}
	if in := t.CacheRead + t.CacheCreation + t.Input; in > 0 {
		h.CacheHitRatePct = round(float64(t.CacheRead)/float64(in)*100, 1)
	}
	h.CompactSuggested, h.CompactReason = compactAdvice(t.TotalEstimated)
	return h, nil
}

func compactAdvice(total int64) (bool, string) {
	switch {
	case total > compactStrongly:
		return true, "Context is over 80K tokens: run /compact now; the next turns would cost about a tenth as much."
	case total > compactRecommended:
		return true, "Context is over 60K tokens: /compact is recommended to cut the cost of each turn."
	case total > compactConsider:
		return true, "Context is over 40K tokens: consider /compact if the session will go on for long."
	}
	return false, "Context is well below the size where compacting pays off."
}

func round(x float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(x*p) / p
}

// newestTranscript is the most recently modified *.jsonl one level below
// the Claude Code projects directory.
func newestTranscript(projects string) (string, bool) {
	dirs, err := os.ReadDir(projects)
	if err != nil {
		return "", false
	}
	var best string
	var bestTime int64
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(projects, d.Name()))
		if err != nil {
			continue
		}
		for _, f := range files {
			if f.IsDir() || !strings.HasSuffix(f.Name(), ".jsonl") {
				continue
			}
			info, err := f.Info()
			if err != nil {
				continue
			}
			p := filepath.Join(projects, d.Name(), f.Name())
			if t := info.ModTime().UnixNano(); best == "" || t > bestTime || (t == bestTime && p > best) {
				best, bestTime = p, t
			}
		}
	}
	return best, best != ""
}

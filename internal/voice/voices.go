package voice

import (
	_ "embed"
	"errors"
	"io/fs"
	"log/slog"
	"sync"

	"github.com/evokore/evokore/internal/config"
)

//go:embed shipped_voices.json
var shippedVoicesJSON []byte

// shippedVoices are the voices used when no voices.json exists: a default
// and the six personas of EVOKORE-MCP's agent roles.
var shippedVoices = sync.OnceValue(func() *config.Voices {
	v, ds := config.ParseVoices("shipped voices.json", shippedVoicesJSON)
	if ds != nil {
		panic("shipped voices.json: " + ds.Error()) // a build defect; a test guards it
	}
	return v
})

// voiceBook reads voices.json each time an utterance starts, so edits
// apply without a restart. A broken file is reported once per distinct
// problem, at file:line:col, and the last good voices stay in use.
type voiceBook struct {
	path string
	log  *slog.Logger

	mu          sync.Mutex
	good        *config.Voices
	lastProblem string
}

func newVoiceBook(path string, log *slog.Logger) *voiceBook {
	return &voiceBook{path: path, log: log, good: shippedVoices()}
}

// current returns the voices to speak with now.
func (b *voiceBook) current() *config.Voices {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.path == "" {
		return b.good
	}
	v, err := config.LoadVoices(b.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if b.lastProblem != "missing" {
			b.log.Info("no voices.json; using the shipped voices", "path", b.path)
			b.lastProblem = "missing"
		}
		b.good = shippedVoices()
	case err != nil:
		if msg := err.Error(); msg != b.lastProblem {
			b.log.Warn("voices.json is invalid; keeping the last good voices", "from", b.good.File, "problems", msg)
			b.lastProblem = msg
		}
	default:
		if b.lastProblem != "" {
			b.log.Info("voices.json is valid again", "path", b.path)
		}
		b.lastProblem = ""
		b.good = v
	}
	return b.good
}

// resolve returns the voice of persona, merged over the default.
func (b *voiceBook) resolve(persona string) config.VoiceConfig {
	v, found := b.current().Resolve(persona)
	if persona != "" && !found {
		b.log.Debug("unknown persona; using the default voice", "persona", persona)
	}
	return v
}

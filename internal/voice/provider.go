package voice

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/redact"
)

// Provider turns text into speech. One Stream is one utterance.
type Provider interface {
	// Name is the provider's name in health replies and logs.
	Name() string
	// Open starts an utterance in voice v. It may connect to the provider
	// now or buffer until Finish.
	Open(ctx context.Context, v config.VoiceConfig) (Stream, error)
}

// Stream is one utterance on its way to audio.
type Stream interface {
	// Send adds a chunk of text.
	Send(ctx context.Context, text string) error
	// Finish ends the text and returns the audio, or whatever arrived
	// before the provider's flush timeout.
	Finish(ctx context.Context) (Audio, error)
	// Close abandons the utterance; it is safe after Finish.
	Close()
}

// Audio is a finished utterance.
type Audio struct {
	Data []byte
	// Ext is the file extension that names its encoding, such as "mp3".
	Ext string
}

// maxAudio bounds what one utterance may return, so a provider that never
// stops cannot exhaust memory.
const maxAudio = 64 << 20

// formatExt maps an ElevenLabs output format such as "mp3_44100_128" to a
// file extension.
func formatExt(outputFormat string) string {
	prefix, _, _ := strings.Cut(outputFormat, "_")
	switch prefix {
	case "mp3", "pcm", "ulaw", "alaw", "opus", "wav":
		return prefix
	}
	return "mp3"
}

// ProviderError is a refusal from a speech provider. Its Error names the
// provider, the status and a generic reason only: provider bodies are
// not ours to repeat (one that echoes the request repeats the API key),
// so clients never see them. Detail holds the body scrubbed of the
// provider's key and bounded, for the sidecar's own log.
type ProviderError struct {
	Provider string
	// Status is the HTTP status, 0 for an error message on a stream.
	Status int
	Detail string
}

// maxDetail bounds a provider's error body in the log.
const maxDetail = 300

// providerError builds the refusal of a provider whose body was body,
// scrubbing the secrets the provider was given.
func providerError(provider string, status int, body []byte, secrets ...string) *ProviderError {
	detail := strings.Join(strings.Fields(string(body)), " ")
	return &ProviderError{Provider: provider, Status: status, Detail: scrubDetail(detail, secrets...)}
}

// scrubDetail hides secrets (and anything shaped like a bearer token or
// an API key, for keys the sidecar does not hold) and bounds the text.
func scrubDetail(text string, secrets ...string) string {
	text = redact.NewScrubber(nil, secrets...).Bounded(text, 4*maxDetail)
	text = tokenShaped().ReplaceAllString(text, "$1"+redact.Mask)
	return redact.Truncate(text, maxDetail)
}

var tokenShaped = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(bearer\s+|basic\s+|(?:api[-_]?key|xi[-_]api[-_]key|token|secret|authorization)["']?\s*[:=]\s*["']?)[^\s"',;}]+|()\b(?:sk|pk|rk|xi)[-_][A-Za-z0-9_\-]{8,}`)
})

func (e *ProviderError) Error() string {
	switch {
	case e.Status == 0:
		return e.Provider + ": the provider reported an error"
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return fmt.Sprintf("%s: the provider answered %d: it refused the credentials", e.Provider, e.Status)
	case e.Status == http.StatusTooManyRequests:
		return fmt.Sprintf("%s: the provider answered %d: rate limited, retry later", e.Provider, e.Status)
	case e.Status >= 500:
		return fmt.Sprintf("%s: the provider answered %d: it failed", e.Provider, e.Status)
	}
	return fmt.Sprintf("%s: the provider answered %d: it rejected the request", e.Provider, e.Status)
}

// logDetail is the attributes that explain err in the sidecar's log: a
// provider's scrubbed, bounded body.
func logDetail(err error) []any {
	var pe *ProviderError
	if errors.As(err, &pe) && pe.Detail != "" {
		return []any{"err", err, "detail", pe.Detail}
	}
	return []any{"err", err}
}

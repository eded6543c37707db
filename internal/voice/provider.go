package voice

import (
	"context"
	"strings"

	"github.com/evokore/evokore/internal/config"
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

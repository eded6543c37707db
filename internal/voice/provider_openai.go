package voice

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/evokore/evokore/internal/config"
)

// OpenAICompat speaks through an OpenAI-compatible /v1/audio/speech
// endpoint (OpenAI itself, or a local server such as Kokoro). It has no
// streaming input, so a stream buffers the text and posts it on Finish.
type OpenAICompat struct {
	// BaseURL is EVOKORE_TTS_BASE_URL, without the /v1/audio/speech path.
	BaseURL string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// Model and Voice apply when the voice names no openaiModel or
	// openaiVoice.
	Model, Voice string
	Client       *http.Client
}

// Name implements Provider.
func (*OpenAICompat) Name() string { return "openai-compat" }

// speechRequest is the body of POST /v1/audio/speech.
type speechRequest struct {
	Model          string  `json:"model"`
	Input          string  `json:"input"`
	Voice          string  `json:"voice"`
	ResponseFormat string  `json:"response_format"`
	Speed          float64 `json:"speed"`
}

// maxSpeechInput bounds the text one utterance buffers; every known
// endpoint refuses far less.
const maxSpeechInput = 1 << 20

func (p *OpenAICompat) endpoint() (string, error) {
	u, err := url.Parse(p.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("EVOKORE_TTS_BASE_URL %q: want an http:// or https:// URL", p.BaseURL)
	}
	return strings.TrimRight(p.BaseURL, "/") + "/v1/audio/speech", nil
}

// Open implements Provider.
func (p *OpenAICompat) Open(_ context.Context, v config.VoiceConfig) (Stream, error) {
	if _, err := p.endpoint(); err != nil {
		return nil, err
	}
	return &openaiStream{p: p, v: v}, nil
}

type openaiStream struct {
	p    *OpenAICompat
	v    config.VoiceConfig
	text strings.Builder
}

// Send implements Stream.
func (s *openaiStream) Send(_ context.Context, text string) error {
	if s.text.Len()+len(text) > maxSpeechInput {
		return fmt.Errorf("openai-compat: the utterance exceeds %d bytes of text", maxSpeechInput)
	}
	s.text.WriteString(text)
	return nil
}

// Finish implements Stream: one POST with the whole text.
func (s *openaiStream) Finish(ctx context.Context) (Audio, error) {
	endpoint, err := s.p.endpoint()
	if err != nil {
		return Audio{}, err
	}
	body, _ := json.Marshal(speechRequest{
		Model:          firstNonEmpty(s.v.OpenAIModel, s.p.Model),
		Input:          s.text.String(),
		Voice:          firstNonEmpty(s.v.OpenAIVoice, s.p.Voice),
		ResponseFormat: "mp3",
		Speed:          s.v.Speed,
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return Audio{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if s.p.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.p.APIKey)
	}
	resp, err := s.p.Client.Do(req)
	if err != nil {
		return Audio{}, fmt.Errorf("openai-compat: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAudio+1))
	if err != nil {
		return Audio{}, fmt.Errorf("openai-compat: read audio: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return Audio{}, providerError("openai-compat", resp.StatusCode, data, s.p.APIKey)
	}
	if len(data) > maxAudio {
		return Audio{}, fmt.Errorf("openai-compat: the audio exceeds %d bytes", maxAudio)
	}
	if len(data) == 0 {
		return Audio{}, fmt.Errorf("openai-compat returned no audio")
	}
	return Audio{Data: data, Ext: "mp3"}, nil
}

// Close implements Stream.
func (*openaiStream) Close() {}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

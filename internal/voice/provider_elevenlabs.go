package voice

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/evokore/evokore/internal/config"
)

// ElevenLabs streams text to ElevenLabs' WebSocket input API and collects
// the audio it streams back.
type ElevenLabs struct {
	// APIKey is ELEVENLABS_API_KEY; it travels in the first message, never
	// in the URL.
	APIKey string
	// BaseURL is wss://api.elevenlabs.io unless overridden. Plain ws:// is
	// accepted only towards a loopback host, so the key is never sent in
	// clear text over a network.
	BaseURL string
	// ConnectTimeout bounds each connection attempt.
	ConnectTimeout time.Duration
	// Backoff holds the waits between attempts; there are len(Backoff)+1.
	Backoff []time.Duration
	// FlushTimeout bounds the wait for the final audio after a flush.
	FlushTimeout time.Duration
	Logger       *slog.Logger
}

func (p *ElevenLabs) log() *slog.Logger {
	if p.Logger == nil {
		return slog.Default()
	}
	return p.Logger
}

// Name implements Provider.
func (*ElevenLabs) Name() string { return "elevenlabs" }

// checkBaseURL refuses a base URL that would leak the key or is no
// WebSocket URL at all.
func (p *ElevenLabs) checkBaseURL() error {
	u, err := url.Parse(p.BaseURL)
	if err != nil {
		return fmt.Errorf("ElevenLabs base URL %q: %w", p.BaseURL, err)
	}
	switch u.Scheme {
	case "wss":
		return nil
	case "ws":
		if isLoopbackHost(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("ElevenLabs base URL %q: ws:// would send the API key unencrypted; use wss://", p.BaseURL)
	}
	return fmt.Errorf("ElevenLabs base URL %q: want a wss:// URL", p.BaseURL)
}

// elevenBOS opens a stream: a single space, the voice settings and the key.
type elevenBOS struct {
	Text          string             `json:"text"`
	VoiceSettings elevenVoiceSetting `json:"voice_settings"`
	APIKey        string             `json:"xi_api_key"`
}

type elevenVoiceSetting struct {
	Stability       float64 `json:"stability"`
	SimilarityBoost float64 `json:"similarity_boost"`
	Speed           float64 `json:"speed"`
}

// elevenChunk carries text; the empty text ends the stream.
type elevenChunk struct {
	Text                 string `json:"text"`
	TryTriggerGeneration bool   `json:"try_trigger_generation,omitempty"`
}

// elevenReply is what the provider streams back.
type elevenReply struct {
	Audio   *string `json:"audio"`
	IsFinal *bool   `json:"isFinal"`
	Error   string  `json:"error"`
	Message string  `json:"message"`
}

// Open implements Provider: it connects, with retries, and sends the
// voice settings.
func (p *ElevenLabs) Open(ctx context.Context, v config.VoiceConfig) (Stream, error) {
	if err := p.checkBaseURL(); err != nil {
		return nil, err
	}
	q := url.Values{"model_id": {v.Model}, "output_format": {v.OutputFormat}}
	endpoint := strings.TrimRight(p.BaseURL, "/") + "/v1/text-to-speech/" + url.PathEscape(v.VoiceID) + "/stream-input?" + q.Encode()

	var c *websocket.Conn
	for attempt := 0; ; attempt++ {
		dctx, cancel := context.WithTimeout(ctx, p.ConnectTimeout)
		conn, resp, err := websocket.Dial(dctx, endpoint, nil)
		cancel()
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		if err == nil {
			c = conn
			break
		}
		if attempt >= len(p.Backoff) {
			return nil, fmt.Errorf("connect to ElevenLabs (%d attempts): %w", attempt+1, err)
		}
		p.log().Warn("ElevenLabs connect failed; retrying", "attempt", attempt+1, "wait", p.Backoff[attempt], "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(p.Backoff[attempt]):
		}
	}
	c.SetReadLimit(maxAudio)

	s := &elevenStream{p: p, c: c, done: make(chan struct{})}
	bos := elevenBOS{Text: " ", APIKey: p.APIKey, VoiceSettings: elevenVoiceSetting{
		Stability: v.Stability, SimilarityBoost: v.SimilarityBoost, Speed: v.Speed,
	}}
	if err := s.write(ctx, bos); err != nil {
		c.CloseNow()
		return nil, fmt.Errorf("ElevenLabs: send voice settings: %w", err)
	}
	s.ext = formatExt(v.OutputFormat)
	go s.collect()
	return s, nil
}

// elevenStream is one open ElevenLabs connection. collect owns reading;
// the mutex guards what it gathers.
type elevenStream struct {
	p    *ElevenLabs
	c    *websocket.Conn
	ext  string
	done chan struct{} // closed when collect returns

	mu       sync.Mutex
	audio    []byte
	problem  string // an error message the provider sent
	finished bool   // isFinal arrived
}

func (s *elevenStream) write(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.c.Write(ctx, websocket.MessageText, b)
}

// collect gathers audio frames until the final one or the connection ends.
func (s *elevenStream) collect() {
	defer close(s.done)
	for {
		_, data, err := s.c.Read(context.Background())
		if err != nil {
			return
		}
		var r elevenReply
		if err := json.Unmarshal(data, &r); err != nil {
			s.p.log().Warn("ElevenLabs sent a message that is not JSON", "bytes", len(data))
			continue
		}
		s.mu.Lock()
		if r.Audio != nil && *r.Audio != "" {
			chunk, err := base64.StdEncoding.DecodeString(*r.Audio)
			switch {
			case err != nil:
				s.p.log().Warn("ElevenLabs sent audio that is not base64", "err", err)
			case len(s.audio)+len(chunk) > maxAudio:
				s.problem = "ElevenLabs returned more audio than one utterance may hold"
			default:
				s.audio = append(s.audio, chunk...)
			}
		}
		if r.Error != "" || (r.Message != "" && r.Audio == nil) {
			s.problem = strings.TrimSpace(r.Error + " " + r.Message)
		}
		final := r.IsFinal != nil && *r.IsFinal
		s.finished = s.finished || final
		stop := final || len(s.audio) >= maxAudio
		s.mu.Unlock()
		if stop {
			return
		}
	}
}

// Send implements Stream.
func (s *elevenStream) Send(ctx context.Context, text string) error {
	if err := s.write(ctx, elevenChunk{Text: text, TryTriggerGeneration: true}); err != nil {
		return fmt.Errorf("ElevenLabs: send text: %w", err)
	}
	return nil
}

// Finish implements Stream: it ends the text and waits for the final audio
// frame, the connection's end or the flush timeout, whichever is first.
func (s *elevenStream) Finish(ctx context.Context) (Audio, error) {
	defer s.Close()
	if err := s.write(ctx, elevenChunk{Text: ""}); err != nil {
		return Audio{}, fmt.Errorf("ElevenLabs: send end of text: %w", err)
	}
	timer := time.NewTimer(s.p.FlushTimeout)
	defer timer.Stop()
	timedOut := false
	select {
	case <-s.done:
	case <-timer.C:
		timedOut = true
	case <-ctx.Done():
		return Audio{}, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if timedOut {
		s.p.log().Warn("ElevenLabs flush timed out; using the audio received so far", "timeout", s.p.FlushTimeout, "bytes", len(s.audio))
	}
	if len(s.audio) == 0 {
		if s.problem != "" {
			return Audio{}, providerError("ElevenLabs", 0, []byte(s.problem), s.p.APIKey)
		}
		return Audio{}, errors.New("ElevenLabs returned no audio")
	}
	return Audio{Data: append([]byte(nil), s.audio...), Ext: s.ext}, nil
}

// Close implements Stream.
func (s *elevenStream) Close() {
	_ = s.c.CloseNow()
}

package voice

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/evokore/evokore/internal/config"
)

// Defaults of the sidecar's settings.
const (
	DefaultHost           = config.DefaultVoiceSidecarHost
	DefaultPort           = config.DefaultVoiceSidecarPort
	DefaultMaxConnections = config.DefaultVoiceSidecarMaxConnections
	DefaultHeartbeat      = 30 * time.Second
	DefaultDrain          = 2 * time.Second
	// DefaultFlushTimeout bounds the wait for ElevenLabs' final audio.
	DefaultFlushTimeout = 30 * time.Second
	// MaxMessageBytes caps one client message.
	MaxMessageBytes = 1 << 20
)

// Options configure a Server. ReadOptions fills them from the
// environment; tests set them directly.
type Options struct {
	Host           string // VOICE_SIDECAR_HOST
	Port           int    // VOICE_SIDECAR_PORT
	MaxConnections int    // VOICE_SIDECAR_MAX_CONNECTIONS
	// Heartbeat is how often clients are pinged; one that has not answered
	// by the next ping is dropped.
	Heartbeat time.Duration
	// Drain bounds how long Shutdown waits for utterances in progress.
	Drain time.Duration

	// VoicesPath is voices.json; empty or missing means the shipped voices.
	VoicesPath string

	TTS Provider
	// STT is nil when speech-to-text is disabled.
	STT Transcriber

	DisablePlayback bool   // VOICE_SIDECAR_DISABLE_PLAYBACK
	ArtifactDir     string // VOICE_SIDECAR_ARTIFACT_DIR
	// TempDir holds the audio files while they wait to be played.
	TempDir string
	// Player plays one file; nil picks the platform's player at start.
	Player func(file string) []string
	// FFmpeg is the ffmpeg command (program, then any leading arguments)
	// for tempo changes; empty skips them.
	FFmpeg []string

	Logger *slog.Logger
}

// Addr is the host:port the sidecar listens on.
func (o Options) Addr() string { return net.JoinHostPort(o.Host, strconv.Itoa(o.Port)) }

// URL is the ws:// address of the sidecar the environment configures,
// for clients such as `evokore voice say` and the stop hook.
func URL(env config.Env) string {
	return "ws://" + readAddr(config.NewVars(env)).Addr()
}

// readAddr reads VOICE_SIDECAR_HOST and VOICE_SIDECAR_PORT.
func readAddr(v *config.Vars) Options {
	o := Options{
		Host: v.String("VOICE_SIDECAR_HOST"),
		Port: v.Positive("VOICE_SIDECAR_PORT"),
	}
	if o.Port > 65535 {
		v.Warn(fmt.Sprintf("Ignoring VOICE_SIDECAR_PORT=%d: want at most 65535.", o.Port))
		o.Port = DefaultPort
	}
	return o
}

// ErrMissingElevenLabsKey is returned at start-up when the ElevenLabs
// provider is chosen without a key, rather than failing at the first
// utterance.
var ErrMissingElevenLabsKey = errors.New("ELEVENLABS_API_KEY is not set: the elevenlabs TTS provider needs it (or set EVOKORE_TTS_PROVIDER=openai-compat)")

// ReadOptions reads the sidecar's settings from env (see
// docs/voice.md). Values it cannot use are returned as warnings
// and replaced by defaults; a configuration that cannot work is an error.
func ReadOptions(env config.Env, log *slog.Logger) (Options, []string, error) {
	v := config.NewVars(env)
	addr := readAddr(v)
	httpClient := &http.Client{Timeout: 2 * time.Minute}
	o := Options{
		Host:            addr.Host,
		Port:            addr.Port,
		MaxConnections:  v.Positive("VOICE_SIDECAR_MAX_CONNECTIONS"),
		Heartbeat:       DefaultHeartbeat,
		Drain:           DefaultDrain,
		VoicesPath:      firstNonEmpty(env.Get("EVOKORE_VOICES_PATH"), config.DefaultVoicesPath),
		DisablePlayback: v.Bool("VOICE_SIDECAR_DISABLE_PLAYBACK"),
		ArtifactDir:     strings.TrimSpace(env.Get("VOICE_SIDECAR_ARTIFACT_DIR")),
		TempDir:         os.TempDir(),
		Logger:          log,
	}
	if ff, err := exec.LookPath("ffmpeg"); err == nil {
		o.FFmpeg = []string{ff}
	}

	switch provider := strings.ToLower(strings.TrimSpace(env.Get("EVOKORE_TTS_PROVIDER"))); provider {
	case "", "elevenlabs":
		key := strings.TrimSpace(env.Get("ELEVENLABS_API_KEY"))
		if key == "" {
			return o, v.Warnings, ErrMissingElevenLabsKey
		}
		el := &ElevenLabs{
			APIKey:         key,
			BaseURL:        firstNonEmpty(strings.TrimSpace(env.Get("EVOKORE_ELEVENLABS_BASE_URL")), config.DefaultElevenlabsBaseURL),
			ConnectTimeout: 10 * time.Second,
			Backoff:        []time.Duration{500 * time.Millisecond, 1000 * time.Millisecond},
			FlushTimeout:   DefaultFlushTimeout,
			Logger:         log,
		}
		if err := el.checkBaseURL(); err != nil {
			return o, v.Warnings, err
		}
		o.TTS = el
	case "openai-compat", "openai":
		oa := &OpenAICompat{
			BaseURL: firstNonEmpty(strings.TrimSpace(env.Get("EVOKORE_TTS_BASE_URL")), config.DefaultTTSBaseURL),
			APIKey:  strings.TrimSpace(env.Get("EVOKORE_TTS_API_KEY")),
			Model:   firstNonEmpty(strings.TrimSpace(env.Get("EVOKORE_TTS_MODEL")), config.DefaultTTSModel),
			Voice:   firstNonEmpty(strings.TrimSpace(env.Get("EVOKORE_TTS_VOICE")), config.DefaultTTSVoice),
			Client:  httpClient,
		}
		if _, err := oa.endpoint(); err != nil {
			return o, v.Warnings, err
		}
		o.TTS = oa
	default:
		return o, v.Warnings, fmt.Errorf("unknown EVOKORE_TTS_PROVIDER %q: want elevenlabs or openai-compat", provider)
	}

	if v.Bool("EVOKORE_STT_ENABLED") {
		switch provider := strings.ToLower(strings.TrimSpace(env.Get("EVOKORE_STT_PROVIDER"))); provider {
		case "", "whisper-api":
			w := &WhisperAPI{
				BaseURL: firstNonEmpty(strings.TrimSpace(env.Get("EVOKORE_STT_BASE_URL")), config.DefaultSTTBaseURL),
				APIKey:  strings.TrimSpace(env.Get("OPENAI_API_KEY")),
				Model:   firstNonEmpty(strings.TrimSpace(env.Get("EVOKORE_STT_MODEL")), config.DefaultSTTModel),
				Client:  httpClient,
			}
			if w.APIKey == "" {
				v.Warn("EVOKORE_STT_ENABLED is set but OPENAI_API_KEY is not: transcriptions will fail until it is.")
			}
			o.STT = w
		case "local-whisper", "local":
			l := &LocalWhisper{
				Path:    firstNonEmpty(strings.TrimSpace(env.Get("EVOKORE_WHISPER_PATH")), config.DefaultWhisperPath),
				Model:   firstNonEmpty(strings.TrimSpace(env.Get("EVOKORE_STT_LOCAL_MODEL")), config.DefaultSTTLocalModel),
				TempDir: o.TempDir,
			}
			if _, err := lookPath(l.Path); err != nil {
				v.Warn(fmt.Sprintf("EVOKORE_STT_PROVIDER=local-whisper but %q is not installed: transcriptions will fail until it is.", l.Path))
			}
			o.STT = l
		default:
			v.Warn(fmt.Sprintf("Unknown EVOKORE_STT_PROVIDER %q: want whisper-api or local-whisper; speech-to-text stays off.", provider))
		}
	}
	if !o.DisablePlayback {
		p, err := defaultPlayer(env.Get("VOICE_SIDECAR_PLAYER"))
		if err != nil {
			v.Warn(err.Error() + " Audio is written, not played.")
			o.DisablePlayback = true
		}
		o.Player = p
	}
	return o, v.Warnings, nil
}

// lookPath finds a helper program; a variable so that nothing else in the
// package calls exec directly.
var lookPath = exec.LookPath

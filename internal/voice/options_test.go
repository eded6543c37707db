package voice

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/testutil"
)

func TestReadOptions(t *testing.T) {
	read := func(vars map[string]string) (Options, []string, error) {
		vars["VOICE_SIDECAR_DISABLE_PLAYBACK"] = "1"
		return ReadOptions(config.NewEnv(vars), discardLogger())
	}

	o, warnings, err := read(map[string]string{"ELEVENLABS_API_KEY": "xi"})
	if err != nil || len(warnings) != 0 {
		t.Fatalf("defaults: %v %v", err, warnings)
	}
	el, ok := o.TTS.(*ElevenLabs)
	if !ok || o.Addr() != "127.0.0.1:8888" || o.MaxConnections != 5 || o.Heartbeat != DefaultHeartbeat || o.Drain != DefaultDrain ||
		o.STT != nil || el.BaseURL != "wss://api.elevenlabs.io" || len(el.Backoff) != 2 || el.FlushTimeout != DefaultFlushTimeout {
		t.Errorf("defaults: %+v %+v", o, el)
	}

	if _, _, err := read(map[string]string{}); !errors.Is(err, ErrMissingElevenLabsKey) {
		t.Errorf("no key: %v", err)
	}
	if _, _, err := read(map[string]string{"ELEVENLABS_API_KEY": "xi", "EVOKORE_ELEVENLABS_BASE_URL": "ws://tts.example"}); err == nil {
		t.Error("ws:// to a remote host accepted")
	}
	if _, _, err := read(map[string]string{"EVOKORE_TTS_PROVIDER": "polly"}); err == nil || !strings.Contains(err.Error(), "polly") {
		t.Errorf("unknown provider: %v", err)
	}

	o, warnings, err = read(map[string]string{
		"EVOKORE_TTS_PROVIDER": "openai", "EVOKORE_TTS_API_KEY": "sk", "EVOKORE_TTS_MODEL": "kokoro", "EVOKORE_TTS_VOICE": "af_sky",
		"VOICE_SIDECAR_PORT": "nine", "VOICE_SIDECAR_MAX_CONNECTIONS": "-1", "VOICE_SIDECAR_HOST": "::1",
		"EVOKORE_STT_ENABLED": "true", "EVOKORE_STT_PROVIDER": "local", "EVOKORE_WHISPER_PATH": filepath.Join(t.TempDir(), "whisper"),
	})
	oa, ok := o.TTS.(*OpenAICompat)
	if err != nil || !ok || oa.BaseURL != "http://127.0.0.1:8880" || oa.Model != "kokoro" || oa.Voice != "af_sky" || oa.APIKey != "sk" {
		t.Fatalf("openai: %v %+v", err, o.TTS)
	}
	if o.Addr() != "[::1]:8888" || o.MaxConnections != 5 || len(warnings) != 3 {
		t.Errorf("bad numbers fall back with warnings: %s %d %q", o.Addr(), o.MaxConnections, warnings)
	}
	if l, ok := o.STT.(*LocalWhisper); !ok || l.Model != "base" {
		t.Errorf("stt: %+v", o.STT)
	}

	o, warnings, _ = read(map[string]string{"EVOKORE_TTS_PROVIDER": "openai-compat", "EVOKORE_STT_ENABLED": "1"})
	if w, ok := o.STT.(*WhisperAPI); !ok || w.Model != "whisper-1" || len(warnings) != 1 || !strings.Contains(warnings[0], "OPENAI_API_KEY") {
		t.Errorf("whisper-api without a key: %+v %q", o.STT, warnings)
	}
}

func TestFindPlayerByPlatform(t *testing.T) {
	onPath := func(names ...string) func(string) (string, error) {
		return func(n string) (string, error) {
			for _, m := range names {
				if m == n {
					return "/usr/bin/" + n, nil
				}
			}
			return "", errors.New("not found")
		}
	}
	cases := []struct {
		override, goos string
		path           []string
		want           string
	}{
		{"", "linux", []string{"mpv", "aplay"}, "/usr/bin/mpv --no-video --really-quiet --no-terminal a.mp3"},
		{"", "linux", []string{"aplay"}, "/usr/bin/aplay -q a.mp3"},
		{"", "darwin", nil, "afplay a.mp3"},
		{"paplay --volume 30000", "linux", nil, "paplay --volume 30000 a.mp3"},
	}
	for _, c := range cases {
		p, err := findPlayer(c.override, c.goos, onPath(c.path...))
		if err != nil {
			t.Errorf("%+v: %v", c, err)
			continue
		}
		if got := strings.Join(p("a.mp3"), " "); got != c.want {
			t.Errorf("%+v: %s, want %s", c, got, c.want)
		}
	}
	if p, _ := findPlayer("", "windows", onPath()); p == nil || p(`C:\it's.mp3`)[0] != "powershell" || !strings.Contains(p(`C:\it's.mp3`)[4], `'C:\it''s.mp3'`) {
		t.Error("windows player does not quote the file for PowerShell")
	}
	if _, err := findPlayer("", "linux", onPath()); err == nil {
		t.Error("no player on PATH is not reported")
	}
}

func TestStartDeletesStaleTemporaryAudio(t *testing.T) {
	tmp := t.TempDir()
	stale := testutil.WriteFile(t, tmp, "evokore-voice-1700000000000-123.mp3", "old")
	other := testutil.WriteFile(t, tmp, "someone-elses.mp3", "keep")
	startSidecar(t, Options{TTS: newFakeOpenAI(t).provider(), TempDir: tmp})
	waitFor(t, "the stale file deleted", func() bool { _, err := os.Stat(stale); return os.IsNotExist(err) })
	if _, err := os.Stat(other); err != nil {
		t.Errorf("an unrelated file was deleted: %v", err)
	}
}

package voice

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTranscribeWithWhisperAPI(t *testing.T) {
	fake := newFakeWhisper(t)
	stt := &WhisperAPI{BaseURL: fake.URL, APIKey: "sk-stt", Model: "whisper-1", Client: fake.Client()}
	sc := startSidecar(t, Options{TTS: newFakeOpenAI(t).provider(), STT: stt})
	c := dial(t, sc.url)
	mp3 := fixtureMP3(t)
	send(t, c, map[string]any{"type": "transcribe", "audio": base64.StdEncoding.EncodeToString(mp3), "language": "en"})
	got := receive(t, c)
	want := map[string]any{"type": "stt_result", "text": "Hello from evokore.", "language": "english", "duration": 1.25, "confidence": 0.819}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("stt_result[%s] = %v, want %v (%v)", k, got[k], v, got)
		}
	}
	form := fake.forms[0]
	if form["path"] != "/v1/audio/transcriptions" || form["auth"] != "Bearer sk-stt" || form["model"] != "whisper-1" ||
		form["language"] != "en" || form["response_format"] != "verbose_json" || form["filename"] != "audio.mp3" || form["file"] != string(mp3) {
		t.Errorf("request: path %s auth %s model %s language %s format %s file %s (%d bytes)", form["path"], form["auth"], form["model"],
			form["language"], form["response_format"], form["filename"], len(form["file"]))
	}

	// The client's model wins; health names the provider.
	send(t, c, map[string]any{"type": "transcribe", "audio": base64.StdEncoding.EncodeToString([]byte("RIFF....WAVE")), "model": "whisper-large"})
	receive(t, c)
	if f := fake.forms[1]; f["model"] != "whisper-large" || f["filename"] != "audio.wav" || f["language"] != "" {
		t.Errorf("second request: %v", f)
	}
	send(t, c, map[string]any{"text": "__health"})
	if h := receive(t, c); h["sttEnabled"] != true || h["sttProvider"] != "whisper-api" {
		t.Errorf("health: %v", h)
	}

	// A provider error is an stt_error, and the connection stays usable.
	stt.APIKey = "sk-wrong"
	send(t, c, map[string]any{"type": "transcribe", "audio": "AAAA"})
	got = receive(t, c)
	if got["type"] != "stt_error" || !strings.Contains(got["error"].(string), "401") {
		t.Errorf("bad key: %v", got)
	}
}

func TestTranscribeWithLocalWhisper(t *testing.T) {
	// The helper acts as whisper when its name is "whisper".
	bin := filepath.Join(t.TempDir(), "whisper")
	if err := os.Symlink(helperArgv(t, "whisper")[0], bin); err != nil {
		t.Skipf("cannot link the fake whisper: %v", err)
	}
	stt := &LocalWhisper{Path: bin, Model: "base", TempDir: t.TempDir()}
	sc := startSidecar(t, Options{TTS: newFakeOpenAI(t).provider(), STT: stt})
	c := dial(t, sc.url)
	send(t, c, map[string]any{"type": "transcribe", "audio": base64.StdEncoding.EncodeToString([]byte("OggS-not-really")), "language": "de"})
	got := receive(t, c)
	if got["type"] != "stt_result" || got["text"] != "heard 15 bytes of .ogg with base" || got["language"] != "de" ||
		got["duration"] != 2.25 || got["confidence"] != 0.823 {
		t.Errorf("stt_result: %v", got)
	}
	if m, _ := filepath.Glob(filepath.Join(stt.TempDir, "*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}

	missing := &LocalWhisper{Path: filepath.Join(t.TempDir(), "no-whisper"), Model: "base", TempDir: t.TempDir()}
	sc2 := startSidecar(t, Options{TTS: newFakeOpenAI(t).provider(), STT: missing})
	c2 := dial(t, sc2.url)
	send(t, c2, map[string]any{"type": "transcribe", "audio": "AAAA"})
	if got := receive(t, c2); got["type"] != "stt_error" || !strings.Contains(got["error"].(string), "is not installed") {
		t.Errorf("missing whisper: %v", got)
	}
}

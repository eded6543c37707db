package voice

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// testVoices is a voices.json with a persona that overrides some fields.
const testVoices = `{
  "default": {"voiceId": "voice-default", "voiceName": "Rachel", "model": "eleven_turbo_v2_5", "stability": 0.5,
              "similarityBoost": 0.75, "speed": 1.0, "outputFormat": "mp3_22050_32"},
  "personas": {
    "tester": {"voiceId": "voice-tester", "stability": 0.25, "speed": 1.1, "openaiVoice": "onyx", "openaiModel": "tts-1-hd"}
  }
}`

func TestOpenAICompatRequestShapeAndArtefact(t *testing.T) {
	fake := newFakeOpenAI(t)
	voices := testutil.WriteFile(t, t.TempDir(), "voices.json", testVoices)
	sc := startSidecar(t, Options{TTS: fake.provider(), VoicesPath: voices})
	c := dial(t, sc.url)

	// Chunks are buffered and posted once, at the flush, in the persona's
	// voice and model.
	send(t, c, Speak{Text: "Hello, ", Persona: "tester"})
	send(t, c, Speak{Text: "world."})
	send(t, c, Speak{Text: "", Flush: true})
	got := waitArtefacts(t, sc.artifacts, 1)
	if b := readFile(t, got[0]); !bytes.Equal(b, fake.mp3) || validMP3(b) != nil {
		t.Errorf("artefact %s is not the provider's MP3 (%d bytes)", got[0], len(b))
	}
	if !strings.HasSuffix(got[0], ".mp3") {
		t.Errorf("artefact name %s", got[0])
	}

	// The default voice takes model and voice from the environment.
	send(t, c, Speak{Text: "Second.", Flush: true})
	waitArtefacts(t, sc.artifacts, 2)

	calls := fake.calls()
	if len(calls) != 2 {
		t.Fatalf("%d requests, want 2: %+v", len(calls), calls)
	}
	want := []string{
		`{"input":"Hello, world.","model":"tts-1-hd","response_format":"mp3","speed":1.1,"voice":"onyx"}`,
		`{"input":"Second.","model":"tts-env-model","response_format":"mp3","speed":1,"voice":"env-voice"}`,
	}
	for i, call := range calls {
		if call.Method != "POST" || call.Path != "/v1/audio/speech" || call.Auth != "Bearer sk-test" || call.ContentType != "application/json" {
			t.Errorf("request %d: %+v", i, call)
		}
		body, _ := json.Marshal(call.Body)
		if string(body) != want[i] {
			t.Errorf("request %d body %s, want %s", i, body, want[i])
		}
	}
}

func TestOpenAICompatErrorLosesOnlyItsUtterance(t *testing.T) {
	fake := newFakeOpenAI(t)
	p := fake.provider()
	p.APIKey = "" // no key: no Authorization header
	sc := startSidecar(t, Options{TTS: p})
	c := dial(t, sc.url)
	send(t, c, Speak{Text: "please FAIL", Flush: true})
	if got := receive(t, c); !strings.Contains(got["error"].(string), "500") || strings.Contains(got["error"].(string), "voice engine exploded") {
		t.Errorf("error reply (the status, never the provider's body): %v", got)
	}
	waitFor(t, "the provider's body in the log", func() bool { return strings.Contains(sc.log.String(), "voice engine exploded") })
	send(t, c, Speak{Text: "fine", Flush: true})
	waitArtefacts(t, sc.artifacts, 1)
	calls := fake.calls()
	if len(calls) != 2 || calls[0].Auth != "" || calls[1].Auth != "" {
		t.Errorf("requests: %+v", calls)
	}
}

func TestElevenLabsStreamingShapesAndArtefact(t *testing.T) {
	fake := newFakeElevenLabs(t, 0, false)
	voices := testutil.WriteFile(t, t.TempDir(), "voices.json", testVoices)
	sc := startSidecar(t, Options{TTS: fake.provider(t), VoicesPath: voices})
	c := dial(t, sc.url)
	send(t, c, Speak{Text: "Hello, ", Persona: "tester"})
	send(t, c, Speak{Text: "world.", Flush: true})
	got := waitArtefacts(t, sc.artifacts, 1)
	if b := readFile(t, got[0]); !bytes.Equal(b, fake.mp3) || validMP3(b) != nil {
		t.Errorf("artefact is not the streamed MP3 (%d bytes)", len(b))
	}

	attempts, streams := fake.calls()
	if attempts != 1 || len(streams) != 1 {
		t.Fatalf("attempts %d, streams %d", attempts, len(streams))
	}
	s := streams[0]
	if s.Path != "/v1/text-to-speech/voice-tester/stream-input" || s.Query != "model_id=eleven_turbo_v2_5&output_format=mp3_22050_32" {
		t.Errorf("handshake %s?%s", s.Path, s.Query)
	}
	want := []string{
		`{"text":" ","voice_settings":{"similarity_boost":0.75,"speed":1.1,"stability":0.25},"xi_api_key":"xi-test-key"}`,
		`{"text":"Hello, ","try_trigger_generation":true}`,
		`{"text":"world.","try_trigger_generation":true}`,
		`{"text":""}`,
	}
	if len(s.Messages) != len(want) {
		t.Fatalf("messages %v", s.Messages)
	}
	for i, m := range s.Messages {
		if b, _ := json.Marshal(m); string(b) != want[i] {
			t.Errorf("message %d = %s, want %s", i, b, want[i])
		}
	}
}

func TestElevenLabsRetriesTheConnection(t *testing.T) {
	fake := newFakeElevenLabs(t, 2, false) // two refusals, then accepted
	sc := startSidecar(t, Options{TTS: fake.provider(t)})
	c := dial(t, sc.url)
	send(t, c, Speak{Text: "third time lucky", Flush: true})
	waitArtefacts(t, sc.artifacts, 1)
	if attempts, streams := fake.calls(); attempts != 3 || len(streams) != 1 {
		t.Errorf("attempts %d, streams %d; want 3 and 1", attempts, len(streams))
	}

	down := newFakeElevenLabs(t, 100, false)
	sc2 := startSidecar(t, Options{TTS: down.provider(t)})
	c2 := dial(t, sc2.url)
	send(t, c2, Speak{Text: "nobody home", Flush: true})
	got := receive(t, c2)
	if e, _ := got["error"].(string); !strings.HasPrefix(e, "connect to ElevenLabs (3 attempts)") {
		t.Errorf("reply %v", got)
	}
	if attempts, _ := down.calls(); attempts != 3 {
		t.Errorf("%d attempts, want 3", attempts)
	}
	if n := len(artefacts(t, sc2.artifacts)); n != 0 {
		t.Errorf("%d artefacts from a failed connection", n)
	}
}

func TestElevenLabsFlushTimeoutKeepsTheAudioSoFar(t *testing.T) {
	fake := newFakeElevenLabs(t, 0, true) // streams audio, never isFinal
	p := fake.provider(t)
	p.FlushTimeout = time.Second
	logs := &routertest.Buffer{}
	p.Logger = slog.New(slog.NewTextHandler(logs, nil))
	sc := startSidecar(t, Options{TTS: p})
	c := dial(t, sc.url)
	send(t, c, Speak{Text: "a provider that never finishes"})
	waitFor(t, "the audio sent", func() bool { return fake.audioSent() == 1 })
	send(t, c, Speak{Flush: true})
	got := waitArtefacts(t, sc.artifacts, 1)
	if b := readFile(t, got[0]); !bytes.Equal(b, fake.mp3) {
		t.Errorf("artefact has %d bytes, want the %d received before the timeout", len(b), len(fake.mp3))
	}
	if !strings.Contains(logs.String(), "flush timed out") {
		t.Error("the timeout is not logged")
	}
}

func TestElevenLabsRefusesPlainWebSocketToARemoteHost(t *testing.T) {
	p := &ElevenLabs{APIKey: "k", BaseURL: "ws://api.elevenlabs.io"}
	if err := p.checkBaseURL(); err == nil || !strings.Contains(err.Error(), "unencrypted") {
		t.Errorf("ws:// to a remote host: %v", err)
	}
	for _, ok := range []string{"wss://api.elevenlabs.io", "ws://127.0.0.1:9", "ws://localhost:9"} {
		p.BaseURL = ok
		if err := p.checkBaseURL(); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

func TestArtefactNamesNeverCollide(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(t.TempDir(), "a.mp3")
	testutil.WriteFile(t, filepath.Dir(src), "a.mp3", "x")
	seen := map[string]bool{}
	for range 3 {
		p, err := copyArtifact(src, dir, "1700000000000", "mp3")
		if err != nil || seen[p] {
			t.Fatalf("copy: %s %v", p, err)
		}
		seen[p] = true
	}
	if !seen[filepath.Join(dir, "evokore-voice-1700000000000.mp3")] || !seen[filepath.Join(dir, "evokore-voice-1700000000000-3.mp3")] {
		t.Errorf("names: %v", seen)
	}
}

// A provider that echoes the request into its error body (the API key
// included) leaks nothing: TTS and STT clients get the status and a
// generic reason, the log gets the body with the key hidden and cut to a
// few hundred bytes.
func TestProviderErrorBodiesNeverCarryTheKey(t *testing.T) {
	const key = "sk-leakme0123456789abcdef"
	filler := strings.Repeat("x", 64<<10)
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s","echo":{"Authorization":%q}},"pad":"%s"}`,
			strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), r.Header.Get("Authorization"), filler)
	}))
	t.Cleanup(echo.Close)
	tts := &OpenAICompat{BaseURL: echo.URL, APIKey: key, Model: "m", Voice: "v", Client: echo.Client()}
	stt := &WhisperAPI{BaseURL: echo.URL, APIKey: key, Model: "whisper-1", Client: echo.Client()}
	sc := startSidecar(t, Options{TTS: tts, STT: stt})
	c := dial(t, sc.url)

	send(t, c, Speak{Text: "hello", Flush: true})
	ttsErr := receive(t, c)
	send(t, c, map[string]any{"type": "transcribe", "audio": "AAAA"})
	sttErr := receive(t, c)
	for _, got := range []map[string]any{ttsErr, sttErr} {
		text, _ := got["error"].(string)
		if !strings.Contains(text, "401") || strings.Contains(text, key) || strings.Contains(strings.ToLower(text), "bearer") || strings.Contains(text, "Incorrect") {
			t.Errorf("a client was shown more than the status: %v", got)
		}
	}
	if sttErr["type"] != "stt_error" {
		t.Errorf("stt reply: %v", sttErr)
	}
	waitFor(t, "both failures logged", func() bool { return strings.Count(sc.log.String(), "Incorrect API key provided") >= 2 })
	logs := sc.log.String()
	if strings.Contains(logs, key) || strings.Contains(logs, key[3:]) {
		t.Errorf("the key reached the log:\n%s", logs)
	}
	if strings.Contains(logs, filler[:maxDetail]) {
		t.Error("a provider body reached the log unbounded")
	}
}

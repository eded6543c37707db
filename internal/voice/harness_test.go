package voice

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// sidecar is a Server under test on a loopback port.
type sidecar struct {
	srv       *Server
	url       string
	artifacts string
	temp      string
	log       *routertest.Buffer
}

// startSidecar runs a server with opts on 127.0.0.1:0. Unless the test
// says otherwise, playback is off and artefacts go to a temporary dir.
func startSidecar(t *testing.T, opts Options) *sidecar {
	t.Helper()
	logs := &routertest.Buffer{}
	opts.Logger = slog.New(slog.NewTextHandler(io.MultiWriter(logs, testLogWriter{t}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.ArtifactDir == "" {
		opts.ArtifactDir = t.TempDir()
	}
	if opts.TempDir == "" {
		opts.TempDir = t.TempDir()
	}
	if opts.Player == nil {
		opts.DisablePlayback = true
	}
	srv, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-served
	})
	return &sidecar{srv: srv, url: "ws://" + l.Addr().String(), artifacts: opts.ArtifactDir, temp: opts.TempDir, log: logs}
}

// testLogWriter shows the sidecar's log with the test's output.
type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func dial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(MaxMessageBytes * 2)
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func send(t *testing.T, c *websocket.Conn, v any) {
	t.Helper()
	var b []byte
	if s, ok := v.(string); ok {
		b = []byte(s)
	} else {
		b, _ = json.Marshal(v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
}

func receive(t *testing.T, c *websocket.Conn) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, b, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("reply %s: %v", b, err)
	}
	return m
}

// waitFor waits for a positive signal, never a fixed time.
var waitFor = routertest.WaitFor

// artefacts lists the MP3 files in dir.
func artefacts(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "evokore-voice-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func waitArtefacts(t *testing.T, dir string, n int) []string {
	t.Helper()
	waitFor(t, "audio artefacts", func() bool { return len(artefacts(t, dir)) >= n })
	got := artefacts(t, dir)
	if len(got) != n {
		t.Fatalf("%d artefacts, want %d: %v", len(got), n, got)
	}
	return got
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeOpenAI is an OpenAI-compatible /v1/audio/speech endpoint that
// records each request and answers with the MP3 fixture; an input that
// contains "FAIL" gets a 500.
type fakeOpenAI struct {
	*httptest.Server
	mp3 []byte
	// hold, when set, keeps each request waiting until it is closed;
	// arrived receives a value as each request arrives.
	hold    chan struct{}
	arrived chan struct{}

	mu       sync.Mutex
	requests []speechCall
}

type speechCall struct {
	Method, Path, Auth, ContentType string
	Body                            map[string]any
}

func newFakeOpenAI(t *testing.T) *fakeOpenAI {
	f := &fakeOpenAI{mp3: fixtureMP3(t)}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		call := speechCall{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), ContentType: r.Header.Get("Content-Type")}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&call.Body); err != nil {
			http.Error(w, "bad json", 400)
			return
		}
		f.mu.Lock()
		f.requests = append(f.requests, call)
		f.mu.Unlock()
		if f.hold != nil {
			f.arrived <- struct{}{}
			select {
			case <-f.hold:
			case <-r.Context().Done():
				return
			}
		}
		if in, _ := call.Body["input"].(string); strings.Contains(in, "FAIL") {
			http.Error(w, `{"error":{"message":"voice engine exploded"}}`, http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "audio/mpeg")
		w.Write(f.mp3)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeOpenAI) calls() []speechCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]speechCall(nil), f.requests...)
}

func (f *fakeOpenAI) provider() *OpenAICompat {
	return &OpenAICompat{BaseURL: f.URL, APIKey: "sk-test", Model: "tts-env-model", Voice: "env-voice", Client: f.Client()}
}

// fakeElevenLabs speaks ElevenLabs' stream-input protocol: it records the
// handshake URL and every message, and after the end-of-text message
// streams the MP3 fixture back in base64 chunks, then isFinal.
type fakeElevenLabs struct {
	*httptest.Server
	mp3 []byte
	// refuse is how many handshakes to fail with 503 before accepting.
	refuse int
	// noFinal sends the audio after the first text chunk and then never
	// finishes, to exercise the flush timeout.
	noFinal bool

	mu       sync.Mutex
	attempts int
	streams  []elevenCall
	sent     int // audio bursts sent
}

type elevenCall struct {
	Path, Query string
	Messages    []map[string]any
}

func newFakeElevenLabs(t *testing.T, refuse int, noFinal bool) *fakeElevenLabs {
	f := &fakeElevenLabs{mp3: fixtureMP3(t), refuse: refuse, noFinal: noFinal}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeElevenLabs) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.attempts++
	refuse := f.attempts <= f.refuse
	f.mu.Unlock()
	if refuse {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	f.mu.Lock()
	f.streams = append(f.streams, elevenCall{Path: r.URL.Path, Query: r.URL.RawQuery})
	idx := len(f.streams) - 1
	f.mu.Unlock()
	ctx := r.Context()
	sendAudio := func(final bool) {
		for i := 0; i < len(f.mp3); i += 2000 {
			chunk := base64.StdEncoding.EncodeToString(f.mp3[i:min(i+2000, len(f.mp3))])
			b, _ := json.Marshal(map[string]any{"audio": chunk, "isFinal": false, "normalizedAlignment": nil})
			c.Write(ctx, websocket.MessageText, b)
		}
		if final {
			c.Write(ctx, websocket.MessageText, []byte(`{"audio":null,"isFinal":true}`))
		}
		f.mu.Lock()
		f.sent++
		f.mu.Unlock()
	}
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			return
		}
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		dec.Decode(&m)
		f.mu.Lock()
		f.streams[idx].Messages = append(f.streams[idx].Messages, m)
		n := len(f.streams[idx].Messages)
		f.mu.Unlock()
		switch {
		case f.noFinal && n == 2:
			sendAudio(false)
		case !f.noFinal && m["text"] == "":
			sendAudio(true)
		}
	}
}

func (f *fakeElevenLabs) audioSent() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent
}

func (f *fakeElevenLabs) calls() (attempts int, streams []elevenCall) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.attempts, append([]elevenCall(nil), f.streams...)
}

func (f *fakeElevenLabs) provider(t *testing.T) *ElevenLabs {
	return &ElevenLabs{
		APIKey:         "xi-test-key",
		BaseURL:        "ws" + strings.TrimPrefix(f.URL, "http"),
		ConnectTimeout: 10 * time.Second,
		Backoff:        []time.Duration{time.Millisecond, 2 * time.Millisecond},
		FlushTimeout:   30 * time.Second,
		Logger:         slog.New(slog.NewTextHandler(testLogWriter{t}, nil)),
	}
}

// fakeWhisper is /v1/audio/transcriptions: it records the multipart form
// and answers verbose_json.
type fakeWhisper struct {
	*httptest.Server
	mu    sync.Mutex
	forms []map[string]string
}

func newFakeWhisper(t *testing.T) *fakeWhisper {
	f := &fakeWhisper{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		form := map[string]string{"path": r.URL.Path, "auth": r.Header.Get("Authorization")}
		_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil {
			http.Error(w, "not multipart", 400)
			return
		}
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(p)
			if p.FormName() == "file" {
				form["filename"] = p.FileName()
				form["file"] = string(b)
				continue
			}
			form[p.FormName()] = string(b)
		}
		f.mu.Lock()
		f.forms = append(f.forms, form)
		f.mu.Unlock()
		if form["auth"] != "Bearer sk-stt" {
			http.Error(w, `{"error":{"message":"Incorrect API key provided"}}`, http.StatusUnauthorized)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{
			"text": " Hello from evokore. ", "language": "english", "duration": 1.25,
			"segments": []map[string]any{{"end": 1.25, "avg_logprob": -0.2}},
		})
	}))
	t.Cleanup(f.Close)
	return f
}

type websocketConn = websocket.Conn

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// helperArgv is the command line that runs the fake helper program (see
// testdata/fakehelper) in mode with args.
func helperArgv(t *testing.T, mode string, args ...string) []string {
	bin := testutil.Build(t, "./internal/voice/testdata/fakehelper", "voice-fakehelper")
	return slices.Clip(append([]string{bin, mode}, args...))
}

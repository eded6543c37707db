package voice

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestProtocolValidationErrors(t *testing.T) {
	sc := startSidecar(t, Options{TTS: newFakeOpenAI(t).provider()})
	c := dial(t, sc.url)
	cases := []struct {
		name string
		msg  any
		want map[string]any
	}{
		{"text is a number", `{"text": 42}`, map[string]any{"error": "text must be a string"}},
		{"no text", `{"persona": "tester", "flush": true}`, map[string]any{"error": "text must be a string"}},
		{"text too long", map[string]any{"text": strings.Repeat("a", 10001)}, map[string]any{"error": "text exceeds maximum length of 10000 characters"}},
		// 5001 characters outside the BMP are 10002 UTF-16 units.
		{"too long in UTF-16", map[string]any{"text": strings.Repeat("🎙", 5001)}, map[string]any{"error": "text exceeds maximum length of 10000 characters"}},
		{"persona is a number", `{"text": "hi", "persona": 7}`, map[string]any{"error": "persona must be a string"}},
		{"not JSON", `{"text": `, nil},
		{"not an object", `["text"]`, map[string]any{"error": "message must be a JSON object"}},
		{"transcribe while STT is off", map[string]any{"type": "transcribe", "audio": "AAAA"}, map[string]any{"type": "stt_error", "error": "speech-to-text is disabled: set EVOKORE_STT_ENABLED=true"}},
		{"transcribe without audio", map[string]any{"type": "transcribe"}, map[string]any{"type": "stt_error", "error": "audio is required"}},
		{"transcribe with bad base64", map[string]any{"type": "transcribe", "audio": "!!!"}, map[string]any{"type": "stt_error", "error": "audio must be a base64 string"}},
		{"transcribe with a numeric language", map[string]any{"type": "transcribe", "audio": "AAAA", "language": 1}, map[string]any{"type": "stt_error", "error": "language must be a string"}},
	}
	for _, tc := range cases {
		send(t, c, tc.msg)
		got := receive(t, c)
		if tc.want == nil {
			if e, _ := got["error"].(string); !strings.HasPrefix(e, "invalid JSON: ") || len(got) != 1 {
				t.Errorf("%s: %v", tc.name, got)
			}
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
	}

	// Valid messages are not acknowledged: exactly 10000 UTF-16 units,
	// and a null persona, are accepted, so the next reply is the health.
	send(t, c, map[string]any{"text": strings.Repeat("🎙", 5000)})
	send(t, c, `{"text": "more", "persona": null}`)
	send(t, c, map[string]any{"text": "__health"})
	if got := receive(t, c); got["type"] != "health" {
		t.Errorf("valid messages were answered: %v", got)
	}
}

func TestHealth(t *testing.T) {
	sc := startSidecar(t, Options{TTS: newFakeOpenAI(t).provider()})
	a := dial(t, sc.url)
	send(t, a, map[string]any{"text": "__health"})
	got := receive(t, a)
	want := map[string]any{"type": "health", "status": "ok", "connections": float64(1), "sttEnabled": false, "sttProvider": nil, "ttsProvider": "openai-compat"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("health[%s] = %v, want %v (%v)", k, got[k], v, got)
		}
	}
	if up, ok := got["uptime"].(float64); !ok || up < 0 {
		t.Errorf("uptime = %v", got["uptime"])
	}
	b := dial(t, sc.url)
	send(t, b, map[string]any{"text": "__health", "flush": true})
	if got := receive(t, b); got["connections"] != float64(2) {
		t.Errorf("with two clients: %v", got)
	}
}

func TestConnectionCapClosesWith1013(t *testing.T) {
	sc := startSidecar(t, Options{TTS: newFakeOpenAI(t).provider(), MaxConnections: 2})
	for range 2 {
		c := dial(t, sc.url)
		send(t, c, map[string]any{"text": "__health"})
		receive(t, c) // registered
	}
	extra := dial(t, sc.url)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := extra.Read(ctx)
	var ce websocket.CloseError
	if !asCloseError(err, &ce) || ce.Code != websocket.StatusTryAgainLater || ce.Reason != "Maximum connections reached" {
		t.Fatalf("third client: %v, want close 1013 Maximum connections reached", err)
	}
	if n := sc.srv.Connections(); n != 2 {
		t.Errorf("%d connections after the refusal, want 2", n)
	}
}

// A burst of clients over the cap, each writing at once: every client
// the sidecar does not admit is told so with 1013, none is dropped
// without a close frame, and exactly the cap is admitted.
func TestConnectionCapRefusesEveryClientOfABurstWith1013(t *testing.T) {
	sc := startSidecar(t, Options{TTS: newFakeOpenAI(t).provider()})
	const clients = 4 * DefaultMaxConnections
	results := make([]error, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, _, err := websocket.Dial(ctx, sc.url, nil)
			if err != nil {
				results[i] = err
				return
			}
			// Admitted clients stay until every client has been judged.
			t.Cleanup(func() { c.CloseNow() })
			_ = c.Write(ctx, websocket.MessageText, []byte(`{"text":"__health"}`))
			_, _, results[i] = c.Read(ctx)
		})
	}
	wg.Wait()
	admitted, refused := 0, 0
	for i, err := range results {
		var ce websocket.CloseError
		switch {
		case err == nil:
			admitted++
		case asCloseError(err, &ce) && ce.Code == websocket.StatusTryAgainLater && ce.Reason == "Maximum connections reached":
			refused++
		default:
			t.Errorf("client %d got neither a reply nor a 1013 close: %v", i, err)
		}
	}
	if admitted != DefaultMaxConnections || refused != clients-DefaultMaxConnections {
		t.Errorf("%d admitted and %d refused with 1013 of %d, want %d admitted", admitted, refused, clients, DefaultMaxConnections)
	}
}

func TestRefusesNonLoopbackPeersAndHosts(t *testing.T) {
	srv, err := NewServer(Options{TTS: newFakeOpenAI(t).provider(), DisablePlayback: true, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	upgrade := func(remote, host string) int {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr, r.Host = remote, host
		r.Header.Set("Connection", "Upgrade")
		r.Header.Set("Upgrade", "websocket")
		r.Header.Set("Sec-WebSocket-Version", "13")
		r.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		return w.Code
	}
	for _, tc := range []struct {
		remote, host string
		want         int
	}{
		{"203.0.113.7:40000", "127.0.0.1:8888", http.StatusForbidden},
		{"[2001:db8::1]:40000", "127.0.0.1:8888", http.StatusForbidden},
		{"10.0.0.2:40000", "localhost:8888", http.StatusForbidden},
		// A page on a rebound DNS name reaches 127.0.0.1 with its own Host.
		{"127.0.0.1:40000", "attacker.example:8888", http.StatusForbidden},
	} {
		if got := upgrade(tc.remote, tc.host); got != tc.want {
			t.Errorf("peer %s host %s: %d, want %d", tc.remote, tc.host, got, tc.want)
		}
	}
	// The same check lets loopback clients through (the upgrade itself
	// needs a hijackable connection, which a recorder lacks).
	for _, peer := range []string{"127.0.0.1:40000", "[::1]:40000"} {
		if got := upgrade(peer, "localhost:8888"); got == http.StatusForbidden {
			t.Errorf("loopback peer %s refused", peer)
		}
	}
}

func TestHeartbeatDropsUnresponsiveClient(t *testing.T) {
	sc := startSidecar(t, Options{TTS: newFakeOpenAI(t).provider(), Heartbeat: 500 * time.Millisecond})
	// A coder/websocket client answers pings only while it reads; this one
	// never reads, so it is dead to the heartbeat.
	dead := dial(t, sc.url)
	waitFor(t, "the dead client to be registered", func() bool { return sc.srv.Connections() == 1 })
	waitFor(t, "the dead client to be dropped", func() bool { return sc.srv.Connections() == 0 })
	if !strings.Contains(sc.log.String(), "did not answer the heartbeat") {
		t.Errorf("no log line for the drop:\n%s", sc.log)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := dead.Read(ctx); err == nil {
		t.Error("the dropped client can still read")
	}

	// A client that reads answers every ping and stays.
	var pings atomic.Int32
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	live, _, err := websocket.Dial(ctx2, sc.url, &websocket.DialOptions{
		OnPingReceived: func(context.Context, []byte) bool { pings.Add(1); return true },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer live.CloseNow()
	readErr := make(chan error, 1)
	go func() {
		_, _, err := live.Read(context.Background())
		readErr <- err
	}()
	waitFor(t, "three pings answered", func() bool { return pings.Load() >= 3 })
	select {
	case err := <-readErr:
		t.Fatalf("the live client was dropped: %v", err)
	default:
	}
	if n := sc.srv.Connections(); n != 1 {
		t.Errorf("%d connections, want the live one", n)
	}
}

func asCloseError(err error, ce *websocket.CloseError) bool {
	return errors.As(err, ce)
}

func TestMessageOverOneMegabyteClosesWith1009(t *testing.T) {
	sc := startSidecar(t, Options{TTS: newFakeOpenAI(t).provider()})
	c := dial(t, sc.url)
	send(t, c, map[string]any{"text": strings.Repeat("a", MaxMessageBytes)})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := c.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Errorf("over the cap: %v, want close 1009", err)
	}
}

func TestShutdownFinishesUtterancesInProgress(t *testing.T) {
	fake := newFakeOpenAI(t)
	fake.hold, fake.arrived = make(chan struct{}), make(chan struct{}, 1)
	sc := startSidecar(t, Options{TTS: fake.provider()})
	c := dial(t, sc.url)
	send(t, c, Speak{Text: "last words", Flush: true})
	<-fake.arrived

	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		shut <- sc.srv.Shutdown(ctx)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := c.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("client: %v, want 1001", err)
	}
	// The client is gone, the utterance it flushed is still on its way.
	close(fake.hold)
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	waitArtefacts(t, sc.artifacts, 1)
	// New clients are refused once the drain has begun.
	if _, _, err := websocket.Dial(ctx, sc.url, nil); err == nil {
		t.Error("a client connected after Shutdown")
	}
}

func TestShutdownCutsAStuckProviderShortAtTheDeadline(t *testing.T) {
	fake := newFakeOpenAI(t)
	fake.hold, fake.arrived = make(chan struct{}), make(chan struct{}, 1)
	defer close(fake.hold)
	sc := startSidecar(t, Options{TTS: fake.provider()})
	c := dial(t, sc.url)
	send(t, c, Speak{Text: "never answered", Flush: true})
	<-fake.arrived
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the drain time is already over
	if err := sc.srv.Shutdown(ctx); err == nil || !strings.Contains(err.Error(), "drain cut short") {
		t.Errorf("Shutdown: %v", err)
	}
	if n := len(artefacts(t, sc.artifacts)); n != 0 {
		t.Errorf("%d artefacts from an abandoned utterance", n)
	}
}

// A client over the cap that keeps writing and does not read (a client
// streaming audio the moment it connects) still finds the 1013 close
// when it reads: the server waits for its close reply, reading and
// dropping what it sends, and only then ends the connection, whose reset
// does not take the close frame already delivered.
func TestConnectionCapRefusesAClientThatOnlyWritesWith1013(t *testing.T) {
	sc := startSidecar(t, Options{TTS: newFakeOpenAI(t).provider(), MaxConnections: 1})
	first := dial(t, sc.url)
	defer first.CloseNow()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, sc.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	msg := []byte(`{"text":"` + strings.Repeat("a", 16<<10) + `"}`)
	writes := 0
	for ; writes < 1_000_000; writes++ {
		if c.Write(ctx, websocket.MessageText, msg) != nil {
			break
		}
	}
	_, _, err = c.Read(ctx)
	var ce websocket.CloseError
	if !asCloseError(err, &ce) || ce.Code != websocket.StatusTryAgainLater || ce.Reason != "Maximum connections reached" {
		t.Errorf("after %d writes the client read %v, want a 1013 close", writes, err)
	}
}

// Clients that come and go in a burst (admitted ones leave at once, some
// without a close handshake) are each either served or refused with
// 1013, never dropped without a close frame; and the places the leavers
// free are given to later clients, so more than the cap are served in
// all.
func TestConnectionCapUnderChurnServesOrRefusesWith1013(t *testing.T) {
	sc := startSidecar(t, Options{TTS: newFakeOpenAI(t).provider()})
	const clients = 12 * DefaultMaxConnections
	results := make([]error, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, _, err := websocket.Dial(ctx, sc.url, nil)
			if err != nil {
				results[i] = err
				return
			}
			defer c.CloseNow()
			_ = c.Write(ctx, websocket.MessageText, []byte(`{"text":"__health"}`))
			if _, _, results[i] = c.Read(ctx); results[i] == nil && i%2 == 0 {
				_ = c.Close(websocket.StatusNormalClosure, "")
			}
		})
	}
	wg.Wait()
	served := 0
	for i, err := range results {
		var ce websocket.CloseError
		switch {
		case err == nil:
			served++
		case asCloseError(err, &ce) && ce.Code == websocket.StatusTryAgainLater:
		default:
			t.Errorf("client %d got neither a reply nor a 1013 close: %v", i, err)
		}
	}
	if served < DefaultMaxConnections {
		t.Errorf("%d of %d clients served, want at least the cap of %d", served, clients, DefaultMaxConnections)
	}
}

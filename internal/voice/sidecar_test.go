package voice

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// freePort returns a loopback port nobody listens on right now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// sidecarEnv is a minimal environment for the real binary: no ElevenLabs,
// no audio device, temp files in a private directory.
func sidecarEnv(t *testing.T, extra ...string) []string {
	return append([]string{
		"PATH=" + os.Getenv("PATH"), testutil.RaceEnv,
		"HOME=" + t.TempDir(),
		"TMPDIR=" + t.TempDir(),
		"VOICE_SIDECAR_DISABLE_PLAYBACK=1",
	}, extra...)
}

// startBinary runs `evokore voice` and waits for its listening line.
func startBinary(t *testing.T, env []string) (*exec.Cmd, *routertest.Buffer) {
	t.Helper()
	cmd := exec.Command(testutil.Evokore(t), "voice")
	cmd.Dir = t.TempDir()
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	logs := &routertest.Buffer{}
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			logs.Write([]byte(sc.Text() + "\n"))
			if !once && strings.Contains(sc.Text(), "voice sidecar listening") {
				once = true
				close(listening)
			}
		}
	}()
	select {
	case <-listening:
	case <-time.After(60 * time.Second):
		t.Fatalf("the sidecar did not start:\n%s", logs)
	}
	return cmd, logs
}

func TestBinaryDrainsOnSIGTERM(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGTERM on Windows")
	}
	port := freePort(t)
	cmd, logs := startBinary(t, sidecarEnv(t, "EVOKORE_TTS_PROVIDER=openai-compat", "VOICE_SIDECAR_PORT="+port))
	url := "ws://127.0.0.1:" + port
	a, b := dial(t, url), dial(t, url)
	for _, c := range []*websocket.Conn{a, b} {
		send(t, c, map[string]any{"text": "__health"})
		if h := receive(t, c); h["status"] != "ok" {
			t.Fatalf("health: %v", h)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*websocket.Conn{a, b} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, _, err := c.Read(ctx)
		cancel()
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway || ce.Reason != "Server shutting down" {
			t.Errorf("client closed with %v, want 1001 Server shutting down", err)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v\n%s", err, logs)
	}
	if _, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
		t.Error("still listening after the drain")
	}
}

func TestBinaryWithoutElevenLabsKeyFailsAtStart(t *testing.T) {
	cmd := exec.Command(testutil.Evokore(t), "voice")
	cmd.Dir = t.TempDir()
	cmd.Env = sidecarEnv(t, "VOICE_SIDECAR_PORT="+freePort(t))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "ELEVENLABS_API_KEY is not set") {
		t.Errorf("exit %v, output:\n%s", err, out)
	}
}

func TestBinarySayReachesTheProviderAndWritesAnArtefact(t *testing.T) {
	fake := newFakeOpenAI(t)
	port := freePort(t)
	dir := t.TempDir()
	artifacts := filepath.Join(dir, "artifacts")
	voices := testutil.WriteFile(t, dir, "voices.json", testVoices)
	env := sidecarEnv(t, "EVOKORE_TTS_PROVIDER=openai-compat", "EVOKORE_TTS_BASE_URL="+fake.URL, "EVOKORE_TTS_API_KEY=sk-bin",
		"VOICE_SIDECAR_PORT="+port, "VOICE_SIDECAR_ARTIFACT_DIR="+artifacts, "EVOKORE_VOICES_PATH="+voices)
	startBinary(t, env)

	say := exec.Command(testutil.Evokore(t), "voice", "say", "All tests pass.", "--persona", "tester")
	say.Dir = t.TempDir()
	say.Env = env
	if out, err := say.CombinedOutput(); err != nil {
		t.Fatalf("say: %v\n%s", err, out)
	}
	got := waitArtefacts(t, artifacts, 1)
	if err := validMP3(readFile(t, got[0])); err != nil {
		t.Errorf("artefact: %v", err)
	}
	calls := fake.calls()
	if len(calls) != 1 || calls[0].Body["input"] != "All tests pass." || calls[0].Body["voice"] != "onyx" || calls[0].Auth != "Bearer sk-bin" {
		t.Errorf("provider saw %+v", calls)
	}

	// With no sidecar, say fails with exit 1.
	nobody := exec.Command(testutil.Evokore(t), "voice", "say", "hello")
	nobody.Env = sidecarEnv(t, "VOICE_SIDECAR_PORT="+freePort(t))
	out, err := nobody.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "no voice sidecar answers at ws://127.0.0.1:") {
		t.Errorf("say without a sidecar: %v\n%s", err, out)
	}
}

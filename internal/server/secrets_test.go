package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
	"github.com/evokore/evokore/internal/webhook"
)

// receiver is a webhook endpoint that checks every post's signature and
// keeps the bodies.
type receiver struct {
	secret string
	mu     sync.Mutex
	bodies [][]byte
	types  []string
	bad    int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	ok := webhook.Verify(r.secret, req.Header.Get(webhook.HeaderTimestamp), req.Header.Get(webhook.HeaderNonce), body,
		req.Header.Get(webhook.HeaderSignature256))
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ok {
		r.bad++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	r.bodies = append(r.bodies, body)
	r.types = append(r.types, req.Header.Get(webhook.HeaderEvent))
}

func (r *receiver) got(typ string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.types {
		if t == typ {
			return true
		}
	}
	return false
}

// Secrets planted in a call's arguments and in mcp.config.json's env
// placeholders appear in no file evokore wrote under EVOKORE_HOME, not on
// its stderr and not in a webhook post, while the records of the calls are
// there.
func TestRecordsNeverHoldASecret(t *testing.T) {
	const (
		envSecret     = "env-planted-7f3a9c"   // a child's env placeholder
		webhookSecret = "hook-planted-51d2e8"  // the webhook's signing secret
		argPassword   = "arg-planted-pw-0b41"  // under "password"
		argNested     = "arg-planted-key-93aa" // under a nested "api_key"
		argToken      = "arg-planted-tok-6c1e" // under "token", echoed back by the child
	)
	rcv := &receiver{secret: webhookSecret}
	srv := httptest.NewServer(rcv)
	defer srv.Close()

	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	fx := routertest.Fixture(t)
	fx["env"] = map[string]any{"API_TOKEN": "${PLANTED_ENV_SECRET}"}
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{
		"servers":  map[string]any{"fx": fx},
		"webhooks": []any{map[string]any{"url": srv.URL + "/hook", "events": []string{"tool_call", "tool_error", "session_start"}, "secret": "${PLANTED_WEBHOOK_SECRET}"}},
	})
	cmd := exec.Command(testutil.Evokore(t))
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + dir, "EVOKORE_HOME=" + home,
		"EVOKORE_MCP_CONFIG_PATH=" + cfg, "EVOKORE_SKILLS_DIR=" + filepath.Join(dir, "SKILLS"), "EVOKORE_TOOL_DISCOVERY_MODE=legacy",
		"EVOKORE_WEBHOOKS_ALLOW_PRIVATE=true",
		"PLANTED_ENV_SECRET=" + envSecret, "PLANTED_WEBHOOK_SECRET=" + webhookSecret,
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "secrets-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("%v; stderr:\n%s", err, stderr.String())
	}
	call := func(name string, args map[string]any) string {
		t.Helper()
		var res *mcp.CallToolResult
		routertest.WaitFor(t, name+" to be served", func() bool {
			r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
			if err != nil {
				return false
			}
			res = r
			return true
		})
		return routertest.Text(res)
	}
	call("fx_echo", map[string]any{"message": "uses " + envSecret, "password": argPassword,
		"options": map[string]any{"nested": []any{map[string]any{"api_key": argNested}}}})
	// The child's answer carries the env secret and an argument secret.
	if out := call("fx_env", map[string]any{"name": "API_TOKEN"}); !strings.Contains(out, envSecret) {
		t.Fatalf("the child did not see its env: %s", out)
	}
	if out := call("fx_args", map[string]any{"token": argToken, "note": "plain"}); !strings.Contains(out, argToken) {
		t.Fatalf("fx_args did not echo: %s", out)
	}
	call("fx_fail", map[string]any{"message": "failing with " + envSecret})
	routertest.WaitFor(t, "the webhook to receive the calls", func() bool { return rcv.got("tool_error") && rcv.got("session_start") })
	// The calls' events say where the tool comes from.
	rcv.mu.Lock()
	for _, b := range rcv.bodies {
		var post struct {
			Event string
			Data  struct{ Tool, Source string }
		}
		if json.Unmarshal(b, &post) == nil && strings.HasPrefix(post.Event, "tool_") && post.Data.Source != "proxy" {
			t.Errorf("%s of %s: source %q", post.Event, post.Data.Tool, post.Data.Source)
		}
	}
	rcv.mu.Unlock()
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	_ = cmd.Wait()

	// The records are there, with the secrets hidden.
	audit := readAll(t, filepath.Join(home, "audit", "audit.jsonl"))
	for _, want := range []string{`"tool":"fx_echo"`, `"password":"[REDACTED]"`, `"api_key":"[REDACTED]"`, `${PLANTED_ENV_SECRET}`, `"tool":"fx_env"`} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit log lacks %s:\n%s", want, audit)
		}
	}
	replays, _ := filepath.Glob(filepath.Join(home, "sessions", "*-replay.jsonl"))
	if len(replays) != 1 || !strings.Contains(readAll(t, replays[0]), "API_TOKEN=${PLANTED_ENV_SECRET}") {
		t.Errorf("replay %v lacks the scrubbed answer of fx_env", replays)
	}

	secrets := []string{envSecret, webhookSecret, argPassword, argNested, argToken}
	var files []string
	err = filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files = append(files, p)
		text := readAll(t, p)
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds the secret %q", p, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Errorf("evokore wrote only %v", files)
	}
	for _, s := range secrets {
		if strings.Contains(stderr.String(), s) {
			t.Errorf("stderr holds the secret %q:\n%s", s, stderr.String())
		}
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if rcv.bad != 0 {
		t.Errorf("%d posts failed the signature check", rcv.bad)
	}
	for _, b := range rcv.bodies {
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("a webhook post holds the secret %q: %s", s, b)
			}
		}
	}
}

func readAll(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

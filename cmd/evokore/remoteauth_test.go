package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/oauthtest"
)

// lockedBuffer collects a process's stderr while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// childState is the remote child's status and last error as
// proxy_server_status reports them.
func childState(t *testing.T, cs *mcp.ClientSession) (string, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "proxy_server_status", Arguments: map[string]any{"server_id": "remote"}})
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Servers []struct{ Status, LastError string } `json:"servers"`
	}
	_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &st)
	if len(st.Servers) != 1 {
		t.Fatalf("proxy_server_status: %s", res.Content[0].(*mcp.TextContent).Text)
	}
	return st.Servers[0].Status, st.Servers[0].LastError
}

// waitState waits until the child reports want.
func waitState(t *testing.T, cs *mcp.ClientSession, want string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		st, lastErr := childState(t, cs)
		if st == want {
			return lastErr
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child stayed %q (%s), want %q", st, lastErr, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// An OAuth-protected remote server, end to end through the binary: a
// running router shows it needs authorization (and a call says which
// command to run, as doctor does); `evokore auth login` signs in through
// a real browser at a real OpenID provider; the running router boots the
// server without a restart and calls it; `auth status` shows the state;
// the token is found nowhere under EVOKORE_HOME but in its token file,
// nor in anything the router or the commands printed; `auth logout`
// returns the server to "needs authorization".
func TestRemoteServerLoginThroughTheBrowser(t *testing.T) {
	ctx := oauthtest.Browser(t)
	p := oauthtest.NewProvider(t)
	child := oauthtest.NewChild(t, p, oauthtest.ChildOptions{})
	e := newConnectEnv(t)
	cfg := testutil.WriteJSON(t, e.wd, "mcp.config.json", map[string]any{"servers": map[string]any{"remote": map[string]any{
		"type": "http", "url": child.URL,
		"oauth": map[string]any{"clientId": p.ClientID, "clientSecret": "${REMOTE_SECRET}", "callbackPort": p.CallbackPort},
	}}})
	urlFile := filepath.Join(t.TempDir(), "url")
	e.env = append(e.env, "EVOKORE_MCP_CONFIG_PATH="+cfg, "REMOTE_SECRET="+p.ClientSecret,
		"EVOKORE_TOOL_DISCOVERY_MODE=legacy", "BROWSER=echo %s > "+urlFile)

	serve := exec.Command(e.exe, "serve")
	serve.Dir = e.wd
	serve.Env = append([]string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + e.home, "EVOKORE_HOME=" + e.evokore}, e.env...)
	var routerLog lockedBuffer
	serve.Stderr = &routerLog
	var outputs []string
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: serve}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	lastErr := waitState(t, cs, "needs authorization")
	if !strings.Contains(lastErr, "evokore auth login remote") {
		t.Fatalf("status does not name the command: %q", lastErr)
	}
	if d := e.run("doctor"); !strings.Contains(d.stdout, "server 'remote' needs authorization") || !strings.Contains(d.stdout, "evokore auth login remote") {
		t.Fatalf("doctor: %+v", d)
	} else {
		outputs = append(outputs, d.stdout, d.stderr)
	}

	// The user signs in: the browser follows the authorization URL the
	// command opened.
	login := exec.Command(e.exe, "auth", "login", "remote")
	login.Dir = e.wd
	login.Env = serve.Env
	var loginOut, loginErr bytes.Buffer
	login.Stdout, login.Stderr = &loginOut, &loginErr
	if err := login.Start(); err != nil {
		t.Fatal(err)
	}
	authURL := openedURL(urlFile)
	if err := oauthtest.SignIn(ctx)(context.Background(), authURL); err != nil {
		t.Fatalf("sign in at %s: %v\n%s", authURL, err, loginErr.String())
	}
	if err := login.Wait(); err != nil || !strings.Contains(loginOut.String(), "authorized") {
		t.Fatalf("auth login: %v\n%s\n%s", err, loginOut.String(), loginErr.String())
	}
	outputs = append(outputs, loginOut.String(), loginErr.String())

	// The running router boots the server and calls it.
	waitState(t, cs, "connected")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "remote_whoami"})
	if err != nil || res.IsError || !strings.HasPrefix(res.Content[0].(*mcp.TextContent).Text, "subject ") {
		t.Fatalf("remote_whoami: %v %+v", err, res)
	}
	raw, _ := json.Marshal(res)
	outputs = append(outputs, string(raw))

	st := e.run("auth", "status")
	if st.code != 0 || !strings.Contains(st.stdout, "remote") || !strings.Contains(st.stdout, "authorized") {
		t.Fatalf("auth status: %+v", st)
	}
	outputs = append(outputs, st.stdout, st.stderr)

	// The tokens: in their owner-only file, and nowhere else.
	tokenFiles, _ := filepath.Glob(filepath.Join(e.evokore, "oauth", "*.json"))
	if len(tokenFiles) != 1 {
		t.Fatalf("token files: %v", tokenFiles)
	}
	var stored struct {
		Token struct {
			Access  string `json:"access_token"`
			Refresh string `json:"refresh_token"`
		} `json:"token"`
	}
	b, _ := os.ReadFile(tokenFiles[0])
	if err := json.Unmarshal(b, &stored); err != nil || stored.Token.Access == "" || stored.Token.Refresh == "" {
		t.Fatalf("token file: %v %s", err, b)
	}
	secrets := []string{stored.Token.Access, stored.Token.Refresh}
	_ = filepath.WalkDir(e.evokore, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path == tokenFiles[0] {
			return nil
		}
		data, _ := os.ReadFile(path)
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("a token is in %s", path)
			}
		}
		return nil
	})

	if out := e.run("auth", "logout", "remote"); out.code != 0 || !strings.Contains(out.stdout, "revoked") {
		t.Fatalf("auth logout: %+v", out)
	} else {
		outputs = append(outputs, out.stdout, out.stderr)
	}
	// The running router notices: the next call needs authorization, and
	// says how to give it.
	deadline := time.Now().Add(time.Minute)
	for {
		res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "remote_whoami"})
		if err == nil && res.IsError && strings.Contains(res.Content[0].(*mcp.TextContent).Text, "evokore auth login remote") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after logout the call still ran: %v %+v", err, res)
		}
		time.Sleep(100 * time.Millisecond)
	}
	waitState(t, cs, "needs authorization")
	outputs = append(outputs, routerLog.String())
	for _, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Fatalf("a token was printed:\n%s", out)
			}
		}
	}
}

// openedURL is the URL `auth login` showed through a BROWSER that writes
// it to urlFile, once it has (a minute at most; "" if never).
func openedURL(urlFile string) string {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if b, _ := os.ReadFile(urlFile); len(strings.TrimSpace(string(b))) > 0 {
			return strings.TrimSpace(string(b))
		}
	}
	return ""
}

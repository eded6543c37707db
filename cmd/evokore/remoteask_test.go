package main_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/oauthtest"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// A client that takes URL elicitation is asked to authorize a remote
// server itself, in the way its protocol era allows, and its call then
// runs: a 2025-11-25 session gets elicitation/create in URL mode while
// its call waits; a 2026-07-28 request, which has no session to be asked
// on, is answered with the URL elicitation error (-32042) naming the
// link, and the same call sent again once the user signed in runs. The
// link is the provider's; the server, whose token was revoked (`evokore
// auth logout`), is connected again without `evokore auth login`.
func TestACallerIsAskedToAuthorizeARemoteServer(t *testing.T) {
	browser := oauthtest.Browser(t)
	signIn := oauthtest.SignIn(browser)
	p := oauthtest.NewProvider(t)
	child := oauthtest.NewChild(t, p, oauthtest.ChildOptions{})
	bin := testutil.Evokore(t)
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"remote": map[string]any{
		"type": "http", "url": child.URL,
		"oauth": map[string]any{"clientId": p.ClientID, "clientSecret": "${REMOTE_SECRET}", "callbackPort": p.CallbackPort},
	}}})
	env := []string{"EVOKORE_MCP_CONFIG_PATH=" + cfg, "REMOTE_SECRET=" + p.ClientSecret, "EVOKORE_TOOL_DISCOVERY_MODE=legacy"}
	home := t.TempDir()
	// Signed in once, so the router lists the server's tools; each
	// logout below leaves them listed and the server unauthorized.
	operatorLogin(t, bin, home, env, browser)
	logout := func() {
		t.Helper()
		cmd := exec.Command(bin, "auth", "logout", "remote")
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + home, "EVOKORE_HOME=" + home}, env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("auth logout: %v\n%s", err, out)
		}
	}
	r := startReplica(t, bin, home, env)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("router output:\n%s", r.out.String())
		}
	})

	var mu sync.Mutex
	var asked []string
	client := mcp.NewClient(&mcp.Implementation{Name: "asked", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Mode+" "+req.Params.URL)
			mu.Unlock()
			if err := signIn(ctx, req.Params.URL); err != nil {
				t.Errorf("sign in at %s: %v", req.Params.URL, err)
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + r.addr + "/mcp"},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	waitTools(t, cs, "remote_whoami")
	whoami := func() string {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "remote_whoami"})
		if err != nil || res.IsError {
			t.Fatalf("remote_whoami: %v %s", err, routertest.Text(res))
		}
		return routertest.Text(res)
	}

	// 2025-11-25: asked over the session, within the call.
	logout()
	if got := whoami(); !strings.HasPrefix(got, "subject ") {
		t.Fatalf("the call after the user signed in: %q", got)
	}
	mu.Lock()
	if len(asked) != 1 || !strings.HasPrefix(asked[0], "url "+p.Issuer+"/") {
		t.Errorf("the session was asked %q, want one link to %s", asked, p.Issuer)
	}
	mu.Unlock()
	waitState(t, cs, "connected")

	// 2026-07-28: asked in the answer.
	logout()
	call := func() (url string, text string) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
			"name": "remote_whoami",
			"_meta": map[string]any{
				"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
				"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
				"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"url": map[string]any{}}},
			}}})
		status, _, answer := do(t, "POST", "http://"+r.addr+"/mcp", "", map[string]string{
			"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "remote_whoami"}, string(body))
		if i := strings.Index(answer, "data: "); i >= 0 && strings.HasPrefix(answer, "event:") {
			answer = strings.TrimSpace(answer[i+len("data: "):])
		}
		var m struct {
			Result *struct{ Content []struct{ Text string } }
			Error  *struct {
				Code int
				Data struct{ Elicitations []mcp.ElicitParams }
			}
		}
		if err := json.Unmarshal([]byte(answer), &m); err != nil || status != http.StatusOK {
			t.Fatalf("tools/call: %d %s", status, answer)
		}
		switch {
		case m.Error != nil && m.Error.Code == -32042 && len(m.Error.Data.Elicitations) == 1 && m.Error.Data.Elicitations[0].Mode == "url":
			return m.Error.Data.Elicitations[0].URL, ""
		case m.Result != nil && len(m.Result.Content) == 1:
			return "", m.Result.Content[0].Text
		}
		t.Fatalf("tools/call answered %s", answer)
		return "", ""
	}
	link, _ := call()
	if !strings.HasPrefix(link, p.Issuer+"/") {
		t.Fatalf("the -32042 link %q is not the provider's (%s)", link, p.Issuer)
	}
	if err := signIn(context.Background(), link); err != nil {
		t.Fatalf("sign in at %s: %v", link, err)
	}
	if link, text := call(); !strings.HasPrefix(text, "subject ") {
		t.Fatalf("the call sent again once the user signed in: %q (asked again: %q)", text, link)
	}
	mu.Lock()
	if len(asked) != 1 {
		t.Errorf("the 2025-11-25 session was asked again: %q", asked)
	}
	mu.Unlock()
}

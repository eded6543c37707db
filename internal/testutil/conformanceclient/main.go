// Command conformanceclient is a test driver, not part of the product: it
// lets the MCP conformance runner's client scenarios measure evokore as
// the client of its children (`make conformance-client`).
//
// The runner starts it as `conformanceclient URL` with the scenario in
// MCP_CONFORMANCE_SCENARIO (its context in MCP_CONFORMANCE_CONTEXT, the
// protocol revision in MCP_CONFORMANCE_PROTOCOL_VERSION). It plays the
// operator and the user of an evokore whose one child is the scenario's
// server: it writes an mcp.config.json naming URL as that HTTP child
// (its oauth settings from the scenario's context), runs
// `evokore auth login` for the authorization scenarios with itself as
// the browser, then serves `evokore serve` over stdio to a go-sdk client
// and makes the scenario's requests through the router, as the go-sdk's
// own conformance client makes them directly. With -browse URL it is the
// browser: it follows the authorization server's redirect to evokore's
// loopback callback as a user's browser would.
package main

//lint:file-ignore SA1019 the driver declares roots and sampling, whose passing on to the child the scenarios check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native"
)

// childID is the one child's name; its prefix is empty, so the scenario
// server's tool names pass through the router unchanged.
const childID = "conformance"

func main() {
	log.SetFlags(0)
	log.SetPrefix("conformanceclient: ")
	if len(os.Args) == 3 && os.Args[1] == "-browse" {
		if err := browse(context.Background(), os.Args[2]); err != nil {
			log.Fatal(err)
		}
		return
	}
	if len(os.Args) != 2 {
		log.Fatal("usage: conformanceclient URL | conformanceclient -browse URL")
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	log.Printf("scenario %s, protocol %q", scenario, os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"))
	if scenario == "" {
		log.Fatal("MCP_CONFORMANCE_SCENARIO is not set")
	}
	var sctx map[string]any
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		_ = json.Unmarshal([]byte(raw), &sctx)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := run(ctx, os.Args[1], scenario, sctx); err != nil {
		log.Fatalf("scenario %s: %v", scenario, err)
	}
}

// browse is what a user's browser does with an authorization URL: the
// scenarios' authorization servers redirect at once (no login page), to
// evokore's loopback callback, which answers when the code is exchanged.
func browse(ctx context.Context, authURL string) error {
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get(authURL)
	if err != nil {
		return fmt.Errorf("browse: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		return fmt.Errorf("browse: the authorization server answered %s", resp.Status)
	}
	return nil
}

// run writes the router's files, authorizes when the scenario needs it,
// and makes the scenario's requests through `evokore serve`.
func run(ctx context.Context, serverURL, scenario string, sctx map[string]any) error {
	evokore, err := evokoreBinary()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "evokore-conformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// An empty skill library: the router then serves no prompts of its
	// own, and the prompts listed are the child's.
	home, skills := filepath.Join(dir, "home"), filepath.Join(dir, "skills")
	for _, d := range []string{home, skills} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	child, secrets := childConfig(serverURL, scenario, sctx)
	cfg, _ := json.MarshalIndent(map[string]any{"servers": map[string]any{childID: child}}, "", "  ")
	cfgPath := filepath.Join(dir, "mcp.config.json")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return err
	}
	env := append(os.Environ(),
		"HOME="+dir,
		"EVOKORE_HOME="+home,
		"EVOKORE_MCP_CONFIG_PATH="+cfgPath,
		"EVOKORE_TOOL_DISCOVERY_MODE=legacy",
		"EVOKORE_SKILLS_DIR="+skills,
		"BROWSER="+self+" -browse %s",
	)
	env = append(env, secrets...)

	login := func() {
		cmd := exec.CommandContext(ctx, evokore, "auth", "login", childID)
		cmd.Dir, cmd.Env = dir, env
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		// A scenario that expects the client to refuse the server ends
		// here with the login's error; the requests below then show the
		// router refusing too.
		if err := cmd.Run(); err != nil {
			log.Printf("evokore auth login: %v", err)
		}
	}
	if interactive(scenario) {
		login()
	}

	serve := exec.Command(evokore, "serve")
	serve.Dir, serve.Env, serve.Stderr = dir, env, os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "evokore-conformance-driver", Version: "1.0.0"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{
			Roots:       mcp.RootCapabilities{ListChanged: true},
			Sampling:    &mcp.SamplingCapabilities{},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return answer(ctx, scenario, req.Params)
		},
	})
	opts := &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	if v := os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"); v != "" {
		opts.ProtocolVersion = v
	}
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: serve, TerminateDuration: 5 * time.Second}, opts)
	if err != nil {
		return fmt.Errorf("connect to evokore: %w", err)
	}
	defer cs.Close()
	status, err := waitForChild(ctx, cs, "booting")
	if err != nil {
		return err
	}
	if status == "needs authorization" && interactive(scenario) {
		// The server wants a new authorization (it moved to another
		// authorization server): the user logs in again, and the running
		// router boots the child without a restart.
		login()
		if _, err := waitForChild(ctx, cs, "needs authorization", "booting"); err != nil {
			return err
		}
	}
	return scenarioRequests(ctx, cs, scenario, sctx)
}

// evokoreBinary is $EVOKORE, or evokore beside this program.
func evokoreBinary() (string, error) {
	if p := os.Getenv("EVOKORE"); p != "" {
		return filepath.Abs(p)
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	p := filepath.Join(filepath.Dir(self), "evokore")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no evokore beside %s (set EVOKORE)", self)
	}
	return p, nil
}

// interactive reports whether a scenario authorizes a user: every auth
// scenario but those of a gateway with no user (client credentials).
func interactive(scenario string) bool {
	return strings.HasPrefix(scenario, "auth/") && !strings.HasPrefix(scenario, "auth/client-credentials")
}

// childConfig is the child's entry in mcp.config.json, as an operator
// would write it from what the scenario hands out, and the environment
// variables that carry its secrets (a config names secrets by ${VAR}).
func childConfig(serverURL, scenario string, sctx map[string]any) (map[string]any, []string) {
	child := map[string]any{"type": "http", "url": serverURL, "prefix": ""}
	if v := os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"); v == "2026-07-28" {
		// The scenario's server speaks the sessionless era alone.
		child["protocolVersion"] = v
	}
	if !strings.HasPrefix(scenario, "auth/") {
		return child, nil
	}
	oauth := map[string]any{
		// The URL the go-sdk's conformance client uses; the scenarios'
		// authorization servers accept it without fetching it.
		"clientMetadataUrl": "https://conformance-test.local/client-metadata.json",
	}
	var env []string
	if id, ok := sctx["client_id"].(string); ok {
		oauth["clientId"] = id
	}
	if secret, ok := sctx["client_secret"].(string); ok {
		oauth["clientSecret"] = "${CONFORMANCE_CLIENT_SECRET}"
		env = append(env, "CONFORMANCE_CLIENT_SECRET="+secret)
	}
	if key, ok := sctx["private_key_pem"].(string); ok {
		oauth["privateKey"] = "${CONFORMANCE_PRIVATE_KEY}"
		env = append(env, "CONFORMANCE_PRIVATE_KEY="+key)
		if alg, ok := sctx["signing_algorithm"].(string); ok {
			oauth["signingAlgorithm"] = alg
		}
	}
	if strings.HasPrefix(scenario, "auth/client-credentials") {
		oauth["grant"] = "client_credentials"
		delete(oauth, "clientMetadataUrl")
	}
	child["oauth"] = oauth
	return child, env
}

// answer is the user's answer to a request for input: a URL is opened in
// the "browser"; a form is accepted as the go-sdk's conformance client
// accepts it for the scenario.
func answer(ctx context.Context, scenario string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if p.Mode == "url" {
		if err := browse(ctx, p.URL); err != nil {
			return nil, err
		}
		return &mcp.ElicitResult{Action: "accept"}, nil
	}
	if scenario == "sep-2322-client-request-state" {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirmed": true}}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
}

// waitForChild waits until the router's child is in none of the states
// passing (its tools are then listed, or it failed and the scenario's
// requests show how), and returns the state it reached.
func waitForChild(ctx context.Context, cs *mcp.ClientSession, passing ...string) (string, error) {
	for {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "proxy_server_status", Arguments: map[string]any{"server_id": childID}})
		if err != nil {
			return "", fmt.Errorf("proxy_server_status: %w", err)
		}
		var st struct {
			Servers []struct {
				Status    string `json:"status"`
				LastError string `json:"lastError"`
			} `json:"servers"`
		}
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				_ = json.Unmarshal([]byte(tc.Text), &st)
			}
		}
		if len(st.Servers) == 1 && !slices.Contains(passing, st.Servers[0].Status) {
			if st.Servers[0].Status != "connected" {
				log.Printf("child %s: %s", st.Servers[0].Status, st.Servers[0].LastError)
			}
			return st.Servers[0].Status, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("the child stayed in %v", passing)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// scenarioRequests makes the requests the go-sdk's conformance client
// makes for the scenario, through the router.
func scenarioRequests(ctx context.Context, cs *mcp.ClientSession, scenario string, sctx map[string]any) error {
	switch scenario {
	case "initialize", "request-metadata", "json-schema-ref-no-deref":
		_, err := cs.ListTools(ctx, nil)
		return err
	case "tools_call":
		return callListed(ctx, cs, "add_numbers", map[string]any{"a": 5, "b": 3})
	case "elicitation-sep1034-client-defaults":
		return callListed(ctx, cs, "test_client_elicitation_defaults", map[string]any{})
	case "sse-retry":
		return callListed(ctx, cs, "test_reconnection", map[string]any{})
	case "json-schema-2020-12-preservation":
		return echoSchema(ctx, cs)
	case "sep-2322-client-request-state":
		for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
			if _, err := call(ctx, cs, name, map[string]any{}); err != nil {
				log.Printf("%s: %v", name, err)
			}
		}
		return nil
	case "http-standard-headers":
		return standardHeaders(ctx, cs)
	case "http-custom-headers":
		return customHeaders(ctx, cs, sctx)
	case "http-invalid-tool-headers":
		tools, err := childTools(ctx, cs)
		if err != nil {
			return err
		}
		for _, t := range tools {
			if _, err := call(ctx, cs, t.Name, map[string]any{"region": "us-west1"}); err != nil {
				log.Printf("%s: %v", t.Name, err)
			}
		}
		return nil
	}
	if strings.HasPrefix(scenario, "auth/") {
		return callListed(ctx, cs, "test-tool", map[string]any{})
	}
	return fmt.Errorf("unknown scenario %q", scenario)
}

// call calls a tool through the router. A URL elicitation the router
// answers with (-32042: a child needs the user to authorize it) is
// opened and the call made again once, as a client that supports URL
// elicitation does.
func call(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != mcp.CodeURLElicitationRequired {
		return res, err
	}
	var data struct {
		Elicitations []*mcp.ElicitParams `json:"elicitations"`
	}
	if json.Unmarshal(we.Data, &data) != nil || len(data.Elicitations) == 0 {
		return res, err
	}
	for _, e := range data.Elicitations {
		if _, err := url.Parse(e.URL); err != nil {
			return nil, err
		}
		if err := browse(ctx, e.URL); err != nil {
			return nil, err
		}
	}
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// childTools lists the child's tools: every listed tool but the router's
// own (the natives of legacy discovery mode).
func childTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	var out []*mcp.Tool
	for _, t := range res.Tools {
		if _, ok := native.Lookup(t.Name); !ok {
			out = append(out, t)
		}
	}
	return out, nil
}

// callListed calls a tool once it is listed.
func callListed(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) error {
	tools, err := childTools(ctx, cs)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(tools, func(t *mcp.Tool) bool { return t.Name == name }) {
		return fmt.Errorf("tool %q is not listed", name)
	}
	res, err := call(ctx, cs, name, args)
	if err != nil {
		return err
	}
	if res.IsError && len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			return fmt.Errorf("%s: %s", name, tc.Text)
		}
	}
	return nil
}

func echoSchema(ctx context.Context, cs *mcp.ClientSession) error {
	tools, err := childTools(ctx, cs)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(tools, func(t *mcp.Tool) bool { return t.Name == "json_schema_2020_12_tool" })
	if i < 0 {
		return errors.New("json_schema_2020_12_tool is not listed")
	}
	_, err = call(ctx, cs, "json_schema_echo", map[string]any{"schema": tools[i].InputSchema})
	return err
}

func standardHeaders(ctx context.Context, cs *mcp.ClientSession) error {
	if tools, err := childTools(ctx, cs); err == nil && len(tools) > 0 {
		_, _ = call(ctx, cs, tools[0].Name, map[string]any{})
	}
	if res, err := cs.ListResources(ctx, nil); err == nil {
		for _, r := range res.Resources {
			if !strings.HasPrefix(r.URI, "evokore://") && !strings.HasPrefix(r.URI, "skill://") {
				_, _ = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
				break
			}
		}
	}
	// The router lists its own prompts first, the children's after.
	if res, err := cs.ListPrompts(ctx, nil); err == nil && len(res.Prompts) > 0 {
		p := res.Prompts[len(res.Prompts)-1]
		_, _ = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: map[string]string{}})
	}
	return nil
}

func customHeaders(ctx context.Context, cs *mcp.ClientSession, sctx map[string]any) error {
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return err
	}
	calls, _ := sctx["toolCalls"].([]any)
	for _, c := range calls {
		obj, _ := c.(map[string]any)
		name, _ := obj["name"].(string)
		args, _ := obj["arguments"].(map[string]any)
		if args == nil {
			args = map[string]any{}
		}
		if _, err := call(ctx, cs, name, args); err != nil {
			log.Printf("%s: %v", name, err)
		}
	}
	return nil
}

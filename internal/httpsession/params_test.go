package httpsession_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

// rpcAnswer is what a raw POST got: its HTTP status and the JSON-RPC
// answer, from a JSON body or the SSE stream's first message.
type rpcAnswer struct {
	status int
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result *mcp.CallToolResult `json:"result"`
}

// post2026 sends one request of the 2026-07-28 protocol with headers, as
// a client without a session.
func post2026(t *testing.T, url, method string, params map[string]any, headers map[string]string) rpcAnswer {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
	}
	all := map[string]string{"Mcp-Protocol-Version": "2026-07-28"}
	for k, v := range headers {
		all[k] = v
	}
	status, _, raw := postRaw(t, url, map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params}, all)
	ans := rpcAnswer{status: status}
	if err := json.Unmarshal(raw, &ans); err != nil {
		t.Fatalf("%s answered %d with %q: %v", method, status, raw, err)
	}
	return ans
}

// postRaw POSTs msg with headers and returns the status, the headers and
// the answer: a JSON body, or the SSE stream's first message.
func postRaw(t *testing.T, url string, msg any, headers map[string]string) (int, http.Header, []byte) {
	t.Helper()
	h := http.Header{}
	for k, v := range headers {
		h.Set(k, v)
	}
	return postHeaders(t, url, msg, h)
}

// postHeaders is postRaw with headers that may repeat.
func postHeaders(t *testing.T, url string, msg any, headers http.Header) (int, http.Header, []byte) {
	t.Helper()
	body, _ := json.Marshal(msg)
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	req.Header = headers.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(b), "\n") {
			// A stream may start with an empty priming event.
			if data, ok := strings.CutPrefix(line, "data: "); ok && strings.TrimSpace(data) != "" {
				return resp.StatusCode, resp.Header, []byte(data)
			}
		}
		return resp.StatusCode, resp.Header, nil
	}
	return resp.StatusCode, resp.Header, b
}

// refused reports what is wrong unless the answer is the spec's refusal
// of a header that does not match the body: 400 and HeaderMismatch.
func (a rpcAnswer) refused() string {
	if a.status == http.StatusBadRequest && a.Error != nil && a.Error.Code == -32020 {
		return ""
	}
	return fmt.Sprintf("want 400 with error -32020, got %d %+v", a.status, a.Error)
}

// A 2026-07-28 request over streamable HTTP mirrors its method, the name
// it calls and the arguments the tool annotates with x-mcp-header into
// headers: the router serves it when they match its body and refuses it
// (400, -32020) when one does not, or is sent twice, so a gateway that
// routed on a header cannot make the router run something else. The
// tool's annotations are its child's, as the router lists them.
func TestMcpHeadersMustMatchTheBody(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t, "-param-headers")},
		map[string]string{"EVOKORE_TOOL_DISCOVERY_MODE": "legacy"})
	h.Server.StartChildren(nil)
	h.Booted()
	ts := httptest.NewServer(h.HTTP(nil, nil))
	t.Cleanup(ts.Close)

	args := map[string]any{"region": "us-west1", "replicas": 3, "target": map[string]any{"zone": "b"}}
	call := func(name string, headers map[string]string) rpcAnswer {
		return post2026(t, ts.URL, "tools/call", map[string]any{"name": name, "arguments": args}, headers)
	}
	good := map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "fx_deploy",
		"Mcp-Param-Region": "us-west1", "Mcp-Param-Replicas": "3", "Mcp-Param-Zone": "b"}
	with := func(k, v string) map[string]string {
		out := map[string]string{}
		for key, val := range good {
			out[key] = val
		}
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}

	ans := call("fx_deploy", good)
	if ans.status != http.StatusOK || ans.Result == nil || !strings.Contains(routertest.Text(ans.Result), `"region":"us-west1"`) {
		t.Fatalf("matching headers: %d %+v %+v", ans.status, ans.Error, ans.Result)
	}
	// Encoded the spec's way, and an integer written otherwise.
	if ans := call("fx_deploy", with("Mcp-Param-Region", "=?base64?dXMtd2VzdDE=?=")); ans.status != http.StatusOK || ans.Error != nil {
		t.Errorf("a base64-encoded Mcp-Param-Region: %d %+v", ans.status, ans.Error)
	}
	if ans := call("fx_deploy", with("Mcp-Param-Replicas", "3.0")); ans.status != http.StatusOK || ans.Error != nil {
		t.Errorf("Mcp-Param-Replicas 3.0 for 3: %d %+v", ans.status, ans.Error)
	}
	if ans := call("fx_deploy", with("Mcp-Name", "=?base64?ZnhfZGVwbG95?=")); ans.status != http.StatusOK || ans.Error != nil {
		t.Errorf("a base64-encoded Mcp-Name: %d %+v", ans.status, ans.Error)
	}

	for what, headers := range map[string]map[string]string{
		"Mcp-Method of another method":    with("Mcp-Method", "tools/list"),
		"no Mcp-Method":                   with("Mcp-Method", ""),
		"Mcp-Name of another tool":        with("Mcp-Name", "fx_echo"),
		"no Mcp-Name":                     with("Mcp-Name", ""),
		"Mcp-Param-Region of another":     with("Mcp-Param-Region", "eu-west1"),
		"no Mcp-Param-Region":             with("Mcp-Param-Region", ""),
		"a nested Mcp-Param-Zone differs": with("Mcp-Param-Zone", "c"),
		"Mcp-Param-Replicas differs":      with("Mcp-Param-Replicas", "4"),
		"broken base64":                   with("Mcp-Param-Region", "=?base64?!!?="),
		"an encoded Mcp-Name of another":  with("Mcp-Name", "=?base64?ZnhfZWNobw==?="),
		"an Mcp-Name of broken base64":    with("Mcp-Name", "=?base64?!?="),
		"a non-ASCII Mcp-Param value":     with("Mcp-Param-Region", "us-wést1"),
	} {
		if problem := call("fx_deploy", headers).refused(); problem != "" {
			t.Errorf("%s: %s", what, problem)
		}
	}
	// A header sent twice is refused whatever its values: a gateway may
	// route on either.
	for _, values := range [][]string{{"us-west1", "eu-west1"}, {"eu-west1", "us-west1"}, {"us-west1", "us-west1"}} {
		h := http.Header{}
		for k, v := range good {
			h.Set(k, v)
		}
		h.Set("Mcp-Protocol-Version", "2026-07-28")
		h.Del("Mcp-Param-Region")
		for _, v := range values {
			h.Add("Mcp-Param-Region", v)
		}
		msg := map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{"name": "fx_deploy", "arguments": args,
			"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}}}
		status, _, raw := postHeaders(t, ts.URL, msg, h)
		ans := rpcAnswer{status: status}
		_ = json.Unmarshal(raw, &ans)
		if problem := ans.refused(); problem != "" {
			t.Errorf("Mcp-Param-Region sent as %q: %s", values, problem)
		}
	}
	// A header for an argument the body leaves out.
	delete(args, "target")
	if problem := call("fx_deploy", good).refused(); problem != "" {
		t.Errorf("Mcp-Param-Zone without target.zone: %s", problem)
	}

	// The go-sdk client mirrors what the router lists, and is served.
	c := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	routertest.ToolNames(t, cs)
	if got := routertest.Text(routertest.Call(t, cs, "fx_deploy", map[string]any{"region": "é", "replicas": 1})); !strings.Contains(got, `"region":"é"`) {
		t.Errorf("the go-sdk client's call: %s", got)
	}
}

// A tool the caller's tools/list does not show (dynamic discovery) is
// called by exact name by a client that may never have seen its
// annotations: a header it sends must still match, one it leaves out is
// not required.
func TestMcpParamHeadersOfAHiddenToolAreCheckedWhenSent(t *testing.T) {
	h := routertest.New(t, map[string]any{"fx": routertest.Fixture(t, "-param-headers")}, nil)
	h.Server.StartChildren(nil)
	h.Booted()
	ts := httptest.NewServer(h.HTTP(nil, nil))
	t.Cleanup(ts.Close)
	params := func() map[string]any {
		return map[string]any{"name": "fx_deploy", "arguments": map[string]any{"region": "us-west1"}}
	}
	std := map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "fx_deploy"}
	if ans := post2026(t, ts.URL, "tools/call", params(), std); ans.status != http.StatusOK || ans.Error != nil {
		t.Errorf("a hidden tool called without Mcp-Param headers: %d %+v", ans.status, ans.Error)
	}
	std["Mcp-Param-Region"] = "eu-west1"
	if problem := post2026(t, ts.URL, "tools/call", params(), std).refused(); problem != "" {
		t.Errorf("a hidden tool's mismatched Mcp-Param-Region: %s", problem)
	}
}

// The front reads a POST's body before the SDK does (to tell the eras
// apart and check the headers): it stops at the SDK's bound and answers
// 413, so a body that never ends costs a bounded read, and the router
// goes on serving.
func TestAnEndlessBodyIsCutOffAtTheBound(t *testing.T) {
	h := routertest.New(t, map[string]any{}, nil)
	ts := httptest.NewServer(h.HTTP(nil, &mcp.StreamableHTTPOptions{MaxRequestBodyBytes: 64 << 10}))
	t.Cleanup(ts.Close)
	for _, version := range []string{"", "2026-07-28"} {
		pr, pw := io.Pipe()
		stop := make(chan struct{})
		go func() {
			_, _ = pw.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"pad":"`))
			chunk := []byte(strings.Repeat("x", 4096))
			for written := 0; written <= 64<<10; written += len(chunk) {
				if _, err := pw.Write(chunk); err != nil {
					return
				}
			}
			<-stop // and never ends
			_ = pw.Close()
		}()
		// Only a guard against a hang: the answer comes as soon as the
		// bound is passed.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, pr)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			req.Header.Set("Mcp-Protocol-Version", version)
			req.Header.Set("Mcp-Method", "tools/list")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("version %q: %v (the front read on past the bound)", version, err)
		}
		_ = resp.Body.Close()
		close(stop)
		cancel()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("version %q: an endless body answered %d", version, resp.StatusCode)
		}
	}
	ans := post2026(t, ts.URL, "tools/list", map[string]any{}, map[string]string{"Mcp-Method": "tools/list"})
	if ans.status != http.StatusOK {
		t.Errorf("after the endless bodies tools/list answered %d %+v", ans.status, ans.Error)
	}
}

package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/server"
	"github.com/evokore/evokore/internal/stdio"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// TestTheHandshakeIsAnsweredBeforeTheServerExists answers a client's
// initialize on a transport opened with Greeting while no server has been
// built, then builds the server, serves the same connection with it, and
// checks the session goes on as if the server had answered: one answer to
// initialize, the same the server gives (the transport warns when they
// differ), and the session's next requests served by the server. Each
// protocol version the SDK supports is asked, plus one it does not.
func TestTheHandshakeIsAnsweredBeforeTheServerExists(t *testing.T) {
	versions := append(mcp.SupportedProtocolVersions(), "1999-01-01")
	for i, version := range versions {
		t.Run(version, func(t *testing.T) {
			id := fmt.Sprint(i + 1)
			if i%2 == 1 {
				id = `"init-` + id + `"` // string ids too
			}
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			logs := &routertest.Buffer{}
			tr := stdio.NewTransport(inR, outW, slog.New(slog.NewTextHandler(logs, nil)))
			tr.Open(server.Greeting("test"))
			lines := bufio.NewReader(outR)
			send := func(frames ...string) {
				go func() { _, _ = io.WriteString(inW, strings.Join(frames, "\n")+"\n") }()
			}
			next := func() map[string]any {
				t.Helper()
				line, err := lines.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				return m
			}

			send(`{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"greeted","version":"1"}}}`)
			early := next()
			result, _ := early["result"].(map[string]any)
			if fmt.Sprint(early["id"]) != strings.Trim(id, `"`) || result == nil {
				t.Fatalf("early answer %v", early)
			}
			negotiated, _ := result["protocolVersion"].(string)
			if !slices.Contains(mcp.SupportedProtocolVersions(), negotiated) ||
				(version < "2026" && version > "2000" && negotiated != version) {
				t.Errorf("asked %s, negotiated %s", version, negotiated)
			}
			if info, _ := result["serverInfo"].(map[string]any); info["name"] != "evokore" || info["version"] != "test" {
				t.Errorf("serverInfo %v", result["serverInfo"])
			}

			// Only now is the router assembled, and it takes the connection.
			h := routertest.New(t, map[string]any{}, nil)
			unblock(t, inW, outR)
			served := make(chan error, 1)
			go func() { served <- h.Server.ServeStdio(context.Background(), tr) }()
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`)
			list := next()
			if list["id"] != "list" {
				t.Fatalf("after the early answer came %v, not the tools/list answer", list)
			}
			tools, _ := list["result"].(map[string]any)["tools"].([]any)
			if len(tools) == 0 {
				t.Errorf("tools/list answered %v", list)
			}
			_ = inW.Close()
			if err := <-served; err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
			if strings.Contains(logs.String(), "differs") {
				t.Errorf("the server's initialize answer differs from the early one:\n%s", logs.String())
			}
			if strings.Contains(h.Stderr.String(), "duplicate") {
				t.Errorf("stderr:\n%s", h.Stderr.String())
			}
		})
	}
}

// TestAFirstFrameOtherThanInitializeReachesTheServer: a transport opened
// with a greeter still hands a first frame that is not initialize (a
// ping) to the server, which answers it.
func TestAFirstFrameOtherThanInitializeReachesTheServer(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	tr := stdio.NewTransport(inR, outW, nil)
	tr.Open(server.Greeting("test"))
	go func() { _, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":7,"method":"ping"}`+"\n") }()
	h := routertest.New(t, map[string]any{}, nil)
	unblock(t, inW, outR)
	served := make(chan error, 1)
	go func() { served <- h.Server.ServeStdio(context.Background(), tr) }()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, `"id":7`) || !strings.Contains(line, `"result"`) {
		t.Errorf("ping answered %s", line)
	}
	_ = inW.Close()
	<-served
}

// unblock ends the client's side when the test ends, before the server
// closes (cleanups run last first): a failed test must not leave the
// session blocked writing to a pipe nobody reads.
func unblock(t *testing.T, in io.Closer, out io.Reader) {
	t.Cleanup(func() {
		_ = in.Close()
		go func() { _, _ = io.Copy(io.Discard, out) }()
	})
}

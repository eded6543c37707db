package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// While the shared session store is down, a session this replica already
// serves keeps working for what needs no shared state (natives, ungated
// proxied tools), and /health says the replica is degraded, naming the
// store, with 200 so a balancer does not pull every replica at once.
func TestServeHTTPKeepsLiveSessionsThroughAStoreOutage(t *testing.T) {
	url, stopRedis := testutil.RedisServerWithStop(t)
	base, _, stderr := httpRouter(t, "EVOKORE_SESSION_STORE=redis", "EVOKORE_REDIS_URL="+url, "EVOKORE_REDIS_KEY_PREFIX=outage:")
	cs, err := connectWith(t, base+"/mcp", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, args map[string]any) (string, error) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return "", err
		}
		if res.IsError {
			return routertest.Text(res), errText(routertest.Text(res))
		}
		return routertest.Text(res), nil
	}
	routertest.WaitFor(t, "the fixture's tools", func() bool { _, err := call("fx_echo", map[string]any{"message": "up"}); return err == nil })
	health := func() (int, map[string]any) {
		code, _, body := do(t, http.MethodGet, base+"/health", "", nil, "")
		var m map[string]any
		_ = json.Unmarshal([]byte(body), &m)
		return code, m
	}
	if code, h := health(); code != 200 || h["status"] != "ok" {
		t.Fatalf("health with the store up: %d %v", code, h)
	}

	stopRedis()
	if text, err := call("search_skills", map[string]any{"query": "architecture"}); err != nil {
		t.Errorf("a native call on a live session during the outage: %v (%s)\n%s", err, text, stderr)
	}
	if text, err := call("fx_echo", map[string]any{"message": "still here"}); err != nil || !strings.Contains(text, "still here") {
		t.Errorf("an ungated proxied call on a live session during the outage: %v (%s)", err, text)
	}
	code, h := health()
	if code != 200 || h["status"] != "degraded" || !strings.Contains(strings.ToLower(stringsOf(h["details"])), "session store") {
		t.Errorf("health during the outage: %d %v", code, h)
	}
}

type errText string

func (e errText) Error() string { return string(e) }

func stringsOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// While the shared Redis is frozen (SIGSTOP: its port accepts, nothing
// answers), a live session's ungated calls are served and do not each
// wait for Redis: the first request meets the timeout, every later one
// is told at once that Redis is not answering (the router's log says
// which), and /health says degraded without waiting either. Once Redis
// answers again, /health is ok and the session goes on.
func TestServeHTTPServesUngatedCallsWhileRedisIsFrozen(t *testing.T) {
	url, freeze, thaw := testutil.RedisServerWithFreeze(t)
	base, _, stderr := httpRouter(t, "EVOKORE_SESSION_STORE=redis", "EVOKORE_REDIS_URL="+url, "EVOKORE_REDIS_KEY_PREFIX=frozen:")
	cs, err := connectWith(t, base+"/mcp", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	echo := func(msg string) (string, bool) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fx_echo", Arguments: map[string]any{"message": msg}})
		if err != nil {
			return err.Error(), false
		}
		return routertest.Text(res), !res.IsError
	}
	routertest.WaitFor(t, "the fixture's tools", func() bool { _, ok := echo("up"); return ok })
	health := func() string {
		_, _, body := do(t, http.MethodGet, base+"/health", "", nil, "")
		return body
	}

	freeze()
	const calls = 10
	for i := range calls {
		if text, ok := echo(fmt.Sprintf("frozen %d", i)); !ok || !strings.Contains(text, fmt.Sprintf("frozen %d", i)) {
			t.Errorf("ungated call %d while Redis is frozen: %s", i, text)
		}
	}
	if h := health(); !strings.Contains(h, `"status":"degraded"`) {
		t.Errorf("/health while Redis is frozen: %s", h)
	}
	// Each request logs why it was served from this replica: the Redis
	// error it waited for, or that Redis was not asked.
	var waited, notAsked int
	for _, line := range strings.Split(stderr.String(), "\n") {
		if !strings.Contains(line, "serving the session from this replica") {
			continue
		}
		if strings.Contains(line, `err="redis is not answering`) {
			notAsked++
		} else {
			waited++
		}
	}
	if waited > 1 || notAsked < calls-1 {
		t.Errorf("of %d requests while Redis was frozen, %d waited for it and %d did not ask it; want one at most waiting\n%s", calls, waited, notAsked, stderr)
	}

	thaw()
	routertest.WaitFor(t, "/health ok once Redis answers", func() bool { return strings.Contains(health(), `"status":"ok"`) })
	if text, ok := echo("thawed"); !ok {
		t.Errorf("after the thaw: %s", text)
	}
}

package proxy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// badTimeout is the request timeout the tests set: a dropped answer
// used to wait it out, and ended with the timeout's message; settled at
// once, it carries its own (MsgAnswerNotJSON, MsgAnswerTooLong).
const badTimeout = "30000"

// A child's answers that cannot go on as they are, for a client on the
// SDK's path (the in-memory client's calls are decoded by the SDK's
// server, and reach the child over the wire as every call does): invalid
// UTF-8 is repaired as decoders repair it, an answer that is not JSON or
// is over the limit settles its call at once with an error saying so,
// and the connection goes on.
func TestBadChildAnswersOverTheSDKPath(t *testing.T) {
	fx := routertest.Fixture(t, "-hostile")
	fx["cooldownMs"] = 60000
	h := routertest.New(t, map[string]any{"h": fx}, with(legacy, map[string]string{"EVOKORE_PROXY_REQUEST_TIMEOUT_MS": badTimeout}))
	cs := h.Connect(nil)
	h.Booted()

	timed := func(tool string, args map[string]any) (*mcp.CallToolResult, error) {
		t.Helper()
		return cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	}

	res, err := timed("h_badutf8", map[string]any{})
	if err != nil || res.IsError || routertest.Text(res) != "bad \uFFFD\uFFFD byte" {
		t.Errorf("badutf8: %q %v", routertest.Text(res), err)
	}

	_, err = timed("h_notjson", map[string]any{})
	if err == nil || !strings.Contains(err.Error(), proxy.MsgAnswerNotJSON("h")) {
		t.Errorf("notjson: %v", err)
	}
	if !strings.Contains(h.Stderr.String(), "[h] skipped a line on stdout that is not JSON-RPC: ") {
		t.Errorf("the dropped line is not logged:\n%s", h.Stderr.String())
	}

	for _, idLast := range []bool{false, true} {
		_, err = timed("h_overlimit", map[string]any{"bytes": 16<<20 + 10, "idLast": idLast})
		if err == nil || !strings.Contains(err.Error(), proxy.MsgAnswerTooLong("h", 16<<20)) {
			t.Errorf("overlimit (id last %v): %v", idLast, err)
		}
	}

	// The connection goes on.
	if got, isErr := routertest.CallText(t, cs, "h_echo", map[string]any{"message": "still here"}); isErr || got != "Echo: still here" {
		t.Errorf("echo after: %q", got)
	}

	// isError given twice reads as its last value, true: the call
	// failed, and the same call is in cooldown.
	res, err = timed("h_dupiserror", map[string]any{})
	if err != nil || !res.IsError {
		t.Fatalf("dupiserror: isError %v, %v", res != nil && res.IsError, err)
	}
	if again := routertest.Call(t, cs, "h_dupiserror", map[string]any{}); !strings.Contains(routertest.Text(again), "[EVOKORE COOLDOWN] Tool 'h_dupiserror' is currently on cooldown") {
		t.Errorf("the same call after its failure: %q", routertest.Text(again))
	}
}

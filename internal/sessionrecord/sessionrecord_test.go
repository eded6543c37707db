package sessionrecord_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/replay"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/sessionrecord"
)

type ledgerFile struct {
	Agents map[string]struct {
		Events, OK, Errors int
	}
}

func readLedger(home, sid string) (ledgerFile, bool) {
	var l ledgerFile
	b, err := os.ReadFile(replay.SessionFile(home, sid, "-trust.json"))
	return l, err == nil && json.Unmarshal(b, &l) == nil
}

// waitLedger polls the ledger file until it counts events calls.
func waitLedger(t *testing.T, home, sid string, events int) ledgerFile {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if l, ok := readLedger(home, sid); ok && l.Agents["main"].Events == events {
			return l
		}
		if time.Now().After(deadline) {
			l, _ := readLedger(home, sid)
			t.Fatalf("the ledger never counted %d events: %+v", events, l)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The trust ledger is saved at most once a second, yet a change made just
// after a save reaches the file without any further call, and Close saves
// what is left; the replay gets every call.
func TestLedgerCatchesUpWithoutMoreCalls(t *testing.T) {
	home := t.TempDir()
	r := sessionrecord.New(home, nil, nil)
	sess := session.New("sess-1", "")
	call := func(text string, fail bool) {
		c := &router.Call{Entry: &catalog.Entry{Name: "fx_echo"}, Session: sess, Args: json.RawMessage(`{"message":"` + text + `"}`), Started: time.Now()}
		var err error
		if fail {
			err = errors.New("boom")
		}
		r.Observe(context.Background(), router.Outcome{Call: c, Result: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, Err: err})
	}
	call("one", false)
	waitLedger(t, home, "sess-1", 1)
	call("two", true) // within a second of the first save: a timer saves it
	if l := waitLedger(t, home, "sess-1", 2); l.Agents["main"].Errors != 1 {
		t.Fatalf("ledger %+v", l)
	}
	call("three", false)
	r.Close()
	if l, _ := readLedger(home, "sess-1"); l.Agents["main"].Events != 3 || l.Agents["main"].OK != 2 {
		t.Fatalf("after Close the ledger is %+v", l)
	}
	b, err := os.ReadFile(filepath.Join(replay.SessionsDir(home), "sess-1-replay.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"summary":"message=one"`) || !strings.Contains(lines[2], `"summary":"message=three"`) {
		t.Fatalf("replay:\n%s", b)
	}
}

// A replay line says what a call was about as it did when the arguments
// were decoded: the usual argument, else the sorted names; arguments that
// are not an object by the name of their size, never their text.
func TestReplaySummaries(t *testing.T) {
	home := t.TempDir()
	r := sessionrecord.New(home, nil, nil)
	sess := session.New("sess-s", "")
	for _, args := range []string{`{"b":2, "path":"/x","command":"ls"}`, `{"z":true,"password":"pw-1234","n":1e3}`, `[1,2,3]`, `not json`, ``} {
		c := &router.Call{Entry: &catalog.Entry{Name: "t"}, Session: sess, Args: json.RawMessage(args), Started: time.Now()}
		r.Observe(context.Background(), router.Outcome{Call: c, Result: &mcp.CallToolResult{}, Err: nil})
	}
	r.Close()
	b, err := os.ReadFile(replay.Path(home, "sess-s"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e replay.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		got = append(got, e.Summary)
	}
	want := []string{"ls", "n=1000 password z=true", "_unreadable_bytes", "_unreadable_bytes", ""}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("summaries %q, want %q", got, want)
	}
}

// A recorder holds a bounded number of trust ledgers however many
// sessions it has recorded (a router serving for weeks sees millions),
// and a session's ledger counts on from its file when the session calls
// again after being let go, or after the router restarted.
func TestLedgersAreBoundedAndCountOnFromTheirFile(t *testing.T) {
	defer sessionrecord.KeepLedgers(8)()
	home := t.TempDir()
	call := func(r *sessionrecord.Recorder, sid string, fail bool) {
		c := &router.Call{Entry: &catalog.Entry{Name: "fx_echo"}, Session: session.New(sid, ""), Args: json.RawMessage(`{}`), Started: time.Now()}
		var err error
		if fail {
			err = errors.New("boom")
		}
		r.Observe(context.Background(), router.Outcome{Call: c, Result: &mcp.CallToolResult{}, Err: err})
	}
	r := sessionrecord.New(home, nil, nil)
	call(r, "first", false)
	call(r, "first", true)
	waitLedger(t, home, "first", 2)
	for i := range 40 {
		call(r, fmt.Sprintf("other-%d", i), false)
	}
	waitLedger(t, home, "other-39", 1)
	call(r, "first", false)
	r.Close()
	if held := r.LedgersHeld(); held > 8 {
		t.Fatalf("the recorder holds %d ledgers after 41 sessions, above its bound of 8", held)
	}
	if l, _ := readLedger(home, "first"); l.Agents["main"].Events != 3 || l.Agents["main"].Errors != 1 {
		t.Fatalf("the ledger of a session let go and back: %+v", l)
	}
	r2 := sessionrecord.New(home, nil, nil)
	call(r2, "first", false)
	r2.Close()
	if l, _ := readLedger(home, "first"); l.Agents["main"].Events != 4 || l.Agents["main"].OK != 3 {
		t.Fatalf("after a restart the ledger is %+v", l)
	}
}

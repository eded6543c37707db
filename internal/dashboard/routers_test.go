package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/approvalfeed"
	"github.com/evokore/evokore/internal/auth"
	"github.com/evokore/evokore/internal/dashboard"
	"github.com/evokore/evokore/internal/httpguard"
	"github.com/evokore/evokore/internal/operatorkey"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

const gated = "rules:\n  fx_count: require_approval\n  fx_echo: require_approval\n"

// gatedRouter is a real router over the fixture child whose fx_count and
// fx_echo need an operator's approval.
func gatedRouter(t *testing.T) *routertest.Harness {
	t.Helper()
	dir := t.TempDir()
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{"fx": routertest.Fixture(t)}})
	testutil.WriteFile(t, dir, "permissions.yml", gated)
	h := routertest.NewWithConfig(t, dir, cfg, map[string]string{"EVOKORE_APPROVALS_MODE": "operator"})
	return h
}

// roleTokens authenticates a bearer token as the role it maps to.
type roleTokens map[string]string

func (m roleTokens) Authenticate(r *http.Request) (auth.Principal, error) {
	tok, _ := auth.Bearer(r)
	role, ok := m[tok]
	if !ok {
		return auth.Principal{}, auth.ErrInvalid
	}
	return auth.Principal{Role: role}, nil
}

// httpRouter serves h over streamable HTTP with the approvals feed at
// /ws/approvals behind the guard, as the HTTP router mounts it, and
// returns its URL. Without tokens every caller is admin.
func httpRouter(t *testing.T, h *routertest.Harness, tokens roleTokens) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", h.HTTP(nil, nil))
	g := httpguard.Options{Identify: func(auth.Principal) httpguard.Caller { return httpguard.Caller{Role: approvalfeed.RoleAdmin} }}
	if tokens != nil {
		g = httpguard.Options{Auth: tokens}
	}
	mux.Handle("/ws/approvals", httpguard.New(g).Wrap(approvalfeed.Handler(approvalfeed.Options{Home: h.Dir + "/home"})))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL
}

func httpClient(t *testing.T, base string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "http-model", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func approvalsOf(t *testing.T, base string) dashboard.ApprovalsView {
	t.Helper()
	r := do(t, "GET", base+"/api/approvals", nil, "")
	var v dashboard.ApprovalsView
	if err := json.Unmarshal([]byte(r.body), &v); err != nil {
		t.Fatalf("%d %s", r.status, r.body)
	}
	return v
}

func hasApproval(v dashboard.ApprovalsView, id, state, source string) bool {
	return slices.ContainsFunc(v.Approvals, func(a dashboard.Approval) bool {
		return a.ID == id && a.State == state && strings.HasPrefix(a.Source, source)
	})
}

// One dashboard, two routers: a stdio router under the dashboard's
// EVOKORE_HOME (its approval files) and an HTTP router with its own
// EVOKORE_HOME (its /ws/approvals feed). Deny and approve reach each.
func TestTwoRoutersFeedOneDashboard(t *testing.T) {
	stdio := gatedRouter(t)
	model := stdio.Connect(nil)
	stdio.Booted()
	remote := gatedRouter(t)
	remoteURL := httpRouter(t, remote, nil)
	remoteModel := httpClient(t, remoteURL)
	remote.Booted()

	feed := "ws" + strings.TrimPrefix(remoteURL, "http") + "/ws/approvals"
	// The operator gave the remote router the dashboard's operator key:
	// the feed records a verdict only from a connection that sent it.
	shareKey(t, stdio.Dir+"/home", remote.Dir+"/home")
	_, base := served(t, dashboard.Options{Home: stdio.Dir + "/home", Feeds: []string{feed}})
	routertest.WaitFor(t, "the feed to connect", func() bool {
		v := approvalsOf(t, base)
		return len(v.Sources) == 2 && v.Sources[1].Connected
	})

	localID := routertest.HeldApproval(t, routertest.Call(t, model, "fx_count", map[string]any{}))
	remoteID := routertest.HeldApproval(t, routertest.Call(t, remoteModel, "fx_count", map[string]any{}))
	routertest.WaitFor(t, "both approvals on the dashboard", func() bool {
		v := approvalsOf(t, base)
		return hasApproval(v, localID, "pending", "local") && hasApproval(v, remoteID, "pending", "ws://")
	})

	cookie, csrf := operatorBrowser(t, base, stdio.Dir+"/home")
	decide := func(verdict, id string) reply {
		return do(t, "POST", base+"/api/approvals/"+verdict, map[string]string{"Cookie": cookie, "X-CSRF-Token": csrf, "Content-Type": "application/json"},
			`{"id":"`+id+`"}`)
	}
	// Deny both: each retry is refused as denied, and nothing ran.
	for _, tc := range []struct {
		id    string
		model *mcp.ClientSession
	}{{localID, model}, {remoteID, remoteModel}} {
		if r := decide("deny", tc.id); r.status != 200 {
			t.Fatalf("deny %s: %d %s", tc.id, r.status, r.body)
		}
		res := routertest.Call(t, tc.model, "fx_count", map[string]any{})
		if !res.IsError || routertest.Text(res) != policy.DeniedApprovalText("fx_count", tc.id) {
			t.Errorf("retry after deny: %q", routertest.Text(res))
		}
		if got := routertest.Text(routertest.Call(t, tc.model, "fx_read_count", map[string]any{})); got != "calls: 0" {
			t.Errorf("a denied call ran: %s", got)
		}
		// A denied approval cannot be approved afterwards.
		if r := decide("approve", tc.id); r.status != 409 {
			t.Errorf("approve after deny: %d %s", r.status, r.body)
		}
	}
	// Approve both: each retry runs once.
	for _, tc := range []struct {
		model  *mcp.ClientSession
		source string
	}{{model, "local"}, {remoteModel, "ws://"}} {
		id := routertest.HeldApproval(t, routertest.Call(t, tc.model, "fx_echo", map[string]any{"message": "hi"}))
		routertest.WaitFor(t, "the approval on the dashboard", func() bool { return hasApproval(approvalsOf(t, base), id, "pending", tc.source) })
		if r := decide("approve", id); r.status != 200 {
			t.Fatalf("approve %s: %d %s", id, r.status, r.body)
		}
		if text, isErr := routertest.CallText(t, tc.model, "fx_echo", map[string]any{"message": "hi"}); isErr || !strings.Contains(text, "hi") {
			t.Errorf("retry after approve: %q", text)
		}
		res := routertest.Call(t, tc.model, "fx_echo", map[string]any{"message": "hi"})
		if again := routertest.HeldApproval(t, res); again == id {
			t.Errorf("the approval ran twice")
		}
	}
}

// The feed refuses callers without a role and decisions beyond theirs.
func TestApprovalFeedAuthorization(t *testing.T) {
	h := gatedRouter(t)
	base := httpRouter(t, h, roleTokens{"dev-token": "developer", "ro-token": "readonly"})
	model := httpClient(t, base)
	h.Booted()
	id := routertest.HeldApproval(t, routertest.Call(t, model, "fx_count", map[string]any{}))
	ws := "ws" + strings.TrimPrefix(base, "http") + "/ws/approvals"

	for tok, want := range map[string]string{"": "HTTP 401", "ro-token": "HTTP 403"} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		changed := make(chan struct{}, 8)
		f := approvalfeed.NewFeed(ws, tok, "", func() { changed <- struct{}{} })
		go func() { f.Run(ctx); close(done) }()
		<-changed
		_, ok, errText := f.State()
		cancel()
		<-done
		if ok || !strings.Contains(errText, want) {
			t.Errorf("token %q: connected %v, %q (want %s)", tok, ok, errText, want)
		}
	}

	changed := make(chan struct{}, 64)
	f := approvalfeed.NewFeed(ws, "dev-token", operatorKey(t, h.Dir+"/home"), func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Run(ctx)
	routertest.WaitFor(t, "the snapshot", func() bool {
		list, _, _ := f.State()
		return slices.ContainsFunc(list, func(p policy.PendingApproval) bool { return p.ID == id })
	})
	if err := f.Decide(ctx, id, policy.StateApproved); err == nil || !strings.Contains(err.Error(), "needs the admin role") {
		t.Errorf("a developer approved: %v", err)
	}
	if err := f.Decide(ctx, "0123", policy.StateDenied); err == nil || !strings.Contains(err.Error(), "16 hex") {
		t.Errorf("a prefix was accepted: %v", err)
	}
	if err := f.Decide(ctx, id, policy.StateDenied); err != nil {
		t.Fatalf("a developer's deny: %v", err)
	}
	res := routertest.Call(t, model, "fx_count", map[string]any{})
	if routertest.Text(res) != policy.DeniedApprovalText("fx_count", id) {
		t.Errorf("retry after the feed's deny: %q", routertest.Text(res))
	}
}

// homeStore serves a router's approval files through the ApprovalStore
// seam, as a shared store (Redis) would: the dashboard polls it.
type homeStore struct{ home string }

func (s homeStore) List(context.Context) ([]policy.PendingApproval, error) {
	return policy.ListPending(s.home, time.Now())
}

func (s homeStore) Decide(_ context.Context, id, verdict string) error {
	return policy.Decide(s.home, id, verdict, time.Now())
}

// With an approval store instead of files, approvals are polled and
// decisions go to the store.
func TestApprovalStoreIsPolledAndDecides(t *testing.T) {
	h := gatedRouter(t)
	model := h.Connect(nil)
	h.Booted()
	home := t.TempDir()
	_, base := served(t, dashboard.Options{Home: home, Approvals: homeStore{h.Dir + "/home"}, Token: secret, Role: "developer"})
	id := routertest.HeldApproval(t, routertest.Call(t, model, "fx_count", map[string]any{}))
	routertest.WaitFor(t, "the stored approval on the dashboard", func() bool {
		r := do(t, "GET", base+"/api/approvals", bearerHdr(secret), "")
		return strings.Contains(r.body, `"id":"`+id+`"`)
	})
	hdr := bearerHdr(secret)
	hdr["Content-Type"] = "application/json"
	if r := do(t, "POST", base+"/api/approvals/deny", hdr, `{"id":"`+id+`"}`); r.status != 403 {
		t.Fatalf("deny without the operator key: %d %s", r.status, r.body)
	}
	if r := do(t, "POST", base+"/api/approvals/deny", withKey(t, home, hdr), `{"id":"`+id+`"}`); r.status != 200 {
		t.Fatalf("deny: %d %s", r.status, r.body)
	}
	if got := routertest.Text(routertest.Call(t, model, "fx_count", map[string]any{})); got != policy.DeniedApprovalText("fx_count", id) {
		t.Errorf("retry: %q", got)
	}
}

// A feed the dashboard cannot reach shows why, but never the credential
// its URL may carry (a user name, a token in the query): the error is
// on the approvals page, which every developer-role caller reads.
func TestUnreachableFeedErrorNamesNoCredential(t *testing.T) {
	// A port nothing listens on: connecting is refused at once.
	ln := httptest.NewServer(http.NotFoundHandler())
	dead := strings.TrimPrefix(ln.URL, "http://")
	ln.Close()
	feed := "ws://feeduser:feedpass@" + dead + "/ws/approvals?access_token=QUERYSECRET"
	_, base := served(t, dashboard.Options{Home: t.TempDir(), Feeds: []string{feed}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := approvalsOf(t, base)
		i := slices.IndexFunc(v.Sources, func(s dashboard.Source) bool { return s.Name != "local" })
		if i >= 0 && v.Sources[i].Error != "" {
			b, _ := json.Marshal(v)
			for _, secret := range []string{"QUERYSECRET", "feeduser", "feedpass", "access_token"} {
				if strings.Contains(string(b), secret) {
					t.Fatalf("/api/approvals shows %q: %s", secret, b)
				}
			}
			if !strings.Contains(v.Sources[i].Error, "connect") {
				t.Fatalf("source error %q does not say what failed", v.Sources[i].Error)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no feed error reported: %+v", v.Sources)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The feed token is the router's at the configured URL, and goes nowhere
// else: a feed that answers with a redirect (to another port of the same
// host, which Go's client would send the Authorization header to, or
// from wss:// down to plain http) is an error, not followed.
func TestFeedTokenIsNotSentWhereARedirectPoints(t *testing.T) {
	got := make(chan string, 16)
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		http.Error(w, "no", http.StatusNotFound)
	}))
	t.Cleanup(elsewhere.Close)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/ws/approvals", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	feed := "ws" + strings.TrimPrefix(redirector.URL, "http") + "/ws/approvals"
	_, base := served(t, dashboard.Options{Home: t.TempDir(), Feeds: []string{feed}, FeedToken: "FEEDTOKEN"})
	var source dashboard.Source
	routertest.WaitFor(t, "the feed to fail", func() bool {
		v := approvalsOf(t, base)
		source = v.Sources[len(v.Sources)-1]
		return source.Error != ""
	})
	select {
	case auth := <-got:
		t.Fatalf("the redirect was followed, with Authorization %q", auth)
	default:
	}
	if !strings.Contains(source.Error, "307") {
		t.Errorf("the feed's error %q does not name the redirect", source.Error)
	}
}

// shareKey gives the router under to the operator key of from, as an
// operator copies operator.key to a router whose EVOKORE_HOME is
// elsewhere.
func shareKey(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(operatorkey.Path(to)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(operatorkey.Path(to), []byte(operatorKey(t, from)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

package dashboard_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/evokore/evokore/internal/dashboard"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// screenshots is where the browser test leaves a picture of each page:
// test-artifacts/ at the repository's root, ignored by git, for CI to
// keep. docs/screenshots holds a copy taken from one run, for the README.
const screenshots = "../../test-artifacts/dashboard"

// browser starts headless Chromium with a fresh profile.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(testutil.Require(t, "chromium", "chromium-browser", "google-chrome")),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	// A hostile value that ran as script would open a dialog.
	if err := chromedp.Do(ctx); err != nil { // start the browser
		t.Fatalf("start chromium: %v", err)
	}
	if err := chromedp.Listen(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			t.Errorf("a page ran script from data: dialog %q", d.Message)
		}
	}); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// get runs one action that returns a value.
func get[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func shoot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(screenshots, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(screenshots, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	step, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	if err := chromedp.Do(step, actions...); err != nil {
		html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html")))
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		t.Fatalf("%s: %v\nat %s:\n%s", what, err, loc, html)
	}
}

// An operator in a real browser: signs in, reads the session list and a
// replay, watches approvals arrive live from a stdio router (its files)
// and an HTTP router (its feed), finds no Approve or Deny until signed in
// as the operator (the one-time link the dashboard prints), then denies
// one (the model's retry is told it was denied) and approves the other
// (the retry runs once).
func TestBrowserOperatorFlow(t *testing.T) {
	ctx := browser(t)

	stdio := gatedRouter(t)
	model := stdio.Connect(nil)
	stdio.Booted()
	remote := gatedRouter(t)
	remoteURL := httpRouter(t, remote, nil)
	remoteModel := httpClient(t, remoteURL)
	remote.Booted()

	home := stdio.Dir + "/home"
	now := time.Now()
	hookSession(t, home, "hook-demo", "Fix the flaky login test", now.Add(-40*time.Minute),
		"Read", "Grep", "Read", "Edit", "!Bash", "Read", "Edit", "Bash", "Bash", "Write")
	routerSession(t, home, "stdio-9c1f2e", now.Add(-5*time.Minute), "fx_echo", "fx_count", "fx_echo")
	hookSession(t, home, "hook-hostile", hostilePurpose, now.Add(-2*time.Hour), hostileTool)
	writeLines(t, filepath.Join(home, "audit", "audit.jsonl"),
		map[string]any{"timestamp": iso(now.Add(-3 * time.Minute)), "eventType": "tool_call", "sessionId": "stdio-9c1f2e", "tool": "fx_echo", "outcome": "ok"},
		map[string]any{"timestamp": iso(now.Add(-2 * time.Minute)), "eventType": "approval_requested", "sessionId": "stdio-9c1f2e", "tool": "fx_count", "outcome": "pending"},
		map[string]any{"timestamp": iso(now.Add(-1 * time.Minute)), "eventType": "approval_denied", "sessionId": "stdio-9c1f2e", "tool": "fx_count", "outcome": "denied"})

	feed := "ws" + strings.TrimPrefix(remoteURL, "http") + "/ws/approvals"
	shareKey(t, home, remote.Dir+"/home")
	d, base := served(t, dashboard.Options{Home: home, Token: secret, Role: "admin", Feeds: []string{feed}})

	// Sign in.
	run(t, ctx, "open the dashboard", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.ID("token")))
	url := get(t, ctx, "location", chromedp.Location())
	if !strings.HasSuffix(url, "/login") {
		t.Errorf("not sent to the login page: %s", url)
	}
	shoot(t, ctx, "login")
	run(t, ctx, "sign in", chromedp.SendKeys(chromedp.ID("token"), secret), chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.ID("sessions")))

	// The session list, newest first.
	first := get(t, ctx, "read the list", chromedp.Text(chromedp.CSS("#sessions tbody tr:first-child a.session-link")))
	if first != "stdio-9c1f2e" {
		t.Errorf("newest session = %q", first)
	}
	shoot(t, ctx, "sessions")

	// A replay.
	run(t, ctx, "open a replay", chromedp.Click(chromedp.CSS(`a.session-link[href="/sessions/hook-demo"]`)),
		chromedp.WaitVisible(chromedp.ID("timeline")), chromedp.WaitVisible(chromedp.ID("chart")))
	calls := get(t, ctx, "calls", chromedp.Text(chromedp.ID("count-calls")))
	errs := get(t, ctx, "errors", chromedp.Text(chromedp.ID("count-errors")))
	if calls != "10" || errs != "1" {
		t.Errorf("replay counts: %s calls, %s errors", calls, errs)
	}
	shoot(t, ctx, "replay")
	run(t, ctx, "open the hostile replay", chromedp.Navigate(base+"/sessions/hook-hostile"), chromedp.WaitVisible(chromedp.ID("timeline")))
	tool := get(t, ctx, "read the hostile tool", chromedp.Text(chromedp.CSS("#timeline td.tool")))
	if tool != hostileTool {
		t.Errorf("the hostile tool name shows as %q", tool)
	}

	// Approvals, live.
	run(t, ctx, "open approvals", chromedp.Navigate(base+"/approvals"), chromedp.WaitVisible(chromedp.CSS(`body[data-live="1"]`)))
	shoot(t, ctx, "approvals-empty")
	localID := routertest.HeldApproval(t, routertest.Call(t, model, "fx_count", map[string]any{}))
	row := `tr.approval[data-id="` + localID + `"]`
	run(t, ctx, "see the stdio router's approval arrive", chromedp.WaitVisible(chromedp.CSS(row+" td.tool")),
		chromedp.WaitVisible(chromedp.ID("operator-needed")))
	if n := get(t, ctx, "buttons before the operator signed in", chromedp.Evaluate[int](`document.querySelectorAll("#approvals button").length`)); n != 0 {
		t.Errorf("%d Approve or Deny buttons for a browser signed in with the token only", n)
	}
	run(t, ctx, "open the operator's sign-in link", chromedp.Navigate(base+"/login?code="+d.SignInCode()), chromedp.WaitVisible(chromedp.ID("use-code")))
	shoot(t, ctx, "login-operator")
	run(t, ctx, "sign in as the operator", chromedp.Click(chromedp.ID("use-code")), chromedp.WaitVisible(chromedp.ID("sessions")))
	run(t, ctx, "open approvals as the operator", chromedp.Navigate(base+"/approvals"), chromedp.WaitVisible(chromedp.CSS(`body[data-live="1"]`)),
		chromedp.WaitVisible(chromedp.CSS(row+" button.deny")))
	shoot(t, ctx, "approvals-pending")
	run(t, ctx, "deny it", chromedp.Click(chromedp.CSS(row+" button.deny")), chromedp.WaitVisible(chromedp.CSS(row+" .state-denied")))
	res := routertest.Call(t, model, "fx_count", map[string]any{})
	if !res.IsError || routertest.Text(res) != policy.DeniedApprovalText("fx_count", localID) {
		t.Errorf("the model's retry after Deny: %q", routertest.Text(res))
	}
	if got := routertest.Text(routertest.Call(t, model, "fx_read_count", map[string]any{})); got != "calls: 0" {
		t.Errorf("the denied call ran: %s", got)
	}
	shoot(t, ctx, "approvals-denied")

	remoteID := routertest.HeldApproval(t, routertest.Call(t, remoteModel, "fx_count", map[string]any{}))
	row = `tr.approval[data-id="` + remoteID + `"]`
	run(t, ctx, "see the HTTP router's approval arrive", chromedp.WaitVisible(chromedp.CSS(row+" button.approve")))
	run(t, ctx, "approve it", chromedp.Click(chromedp.CSS(row+" button.approve")), chromedp.WaitVisible(chromedp.CSS(row+" .state-approved")))
	shoot(t, ctx, "approvals-approved")
	if text, isErr := routertest.CallText(t, remoteModel, "fx_count", map[string]any{}); isErr {
		t.Errorf("the model's retry after Approve: %q", text)
	}
	if again := routertest.HeldApproval(t, routertest.Call(t, remoteModel, "fx_count", map[string]any{})); again == remoteID {
		t.Error("the approval ran a second call")
	}
	if got := routertest.Text(routertest.Call(t, remoteModel, "fx_read_count", map[string]any{})); got != "calls: 1" {
		t.Errorf("the approved call ran %s times", got)
	}

	// A hostile tool name arriving live is drawn as text (the script
	// builds rows with textContent; a dialog would fail the test).
	hostileID := "feedfacecafebeef"
	writeLines(t, filepath.Join(home, "approvals", "pending-hostile.json"), map[string]any{"pid": os.Getpid(), "router": "hostile",
		"approvals": []map[string]any{{"id": hostileID, "toolName": hostileTool, "session": hostilePurpose, "arguments": hostileArgs,
			"state": "pending", "createdAt": time.Now().UnixMilli(), "expiresAt": time.Now().Add(time.Hour).UnixMilli(), "router": "hostile"}}})
	row = `tr.approval[data-id="` + hostileID + `"]`
	run(t, ctx, "see the hostile approval arrive", chromedp.WaitVisible(chromedp.CSS(row+" td.tool")))
	if got := get(t, ctx, "its tool cell", chromedp.Text(chromedp.CSS(row+" td.tool"))); got != hostileTool {
		t.Errorf("the live hostile tool name shows as %q", got)
	}
	if n := get(t, ctx, "injected nodes", chromedp.Evaluate[int](`document.querySelectorAll("#approvals img, #approvals script").length`)); n != 0 {
		t.Errorf("%d injected nodes in the approvals table", n)
	}

	// The audit log.
	run(t, ctx, "open the audit log", chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(chromedp.ID("audit-summary")))
	shoot(t, ctx, "audit")
}

package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/operatorkey"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

var (
	dashboardListening = regexp.MustCompile(`Dashboard listening on (http://127\.0\.0\.1:\d+)`)
	dashboardSignIn    = regexp.MustCompile(`sign in as the operator: (http://\S+/login\?code=[0-9a-f]{64})`)
)

// startDashboard runs `evokore dashboard` on a free port and returns its
// URL.
func startDashboard(t *testing.T, home string, env ...string) (string, *exec.Cmd) {
	t.Helper()
	base, _, cmd := startDashboardSignIn(t, home, env...)
	return base, cmd
}

// startDashboardSignIn is startDashboard that also returns the one-time
// sign-in link the dashboard printed.
func startDashboardSignIn(t *testing.T, home string, env ...string) (base, signIn string, _ *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(testutil.Evokore(t), "dashboard")
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + cmd.Dir, "EVOKORE_HOME=" + home, "EVOKORE_DASHBOARD_PORT=0"}, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := dashboardListening.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
		}
		if m := dashboardSignIn.FindStringSubmatch(sc.Text()); m != nil && base != "" {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return base, m[1], cmd
		}
	}
	t.Fatalf("the dashboard never said where it listens and how to sign in")
	return "", "", nil
}

// operatorKeyOf reads home's operator key, as the operator's own tools
// may.
func operatorKeyOf(t *testing.T, home string) string {
	t.Helper()
	if _, err := operatorkey.Load(home); err != nil {
		t.Fatal(err)
	}
	k, err := operatorkey.Read(home)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A real router process holds a call; a real dashboard process lists it
// and denies it by its full id; the model's retry is told it was denied.
func TestDashboardProcessDeniesARealRoutersCall(t *testing.T) {
	perms := testutil.WriteFile(t, t.TempDir(), "permissions.yml", "rules:\n  one_count: require_approval\n")
	r := startRouter(t, "EVOKORE_PERMISSIONS_PATH="+perms, "EVOKORE_APPROVALS_MODE=operator")
	r.childPids(t)
	home := filepath.Join(r.dir, "home")
	base, dash := startDashboard(t, home, "EVOKORE_DASHBOARD_TOKEN=s3cret", "EVOKORE_DASHBOARD_ROLE=admin")

	id := routertest.HeldApproval(t, routertest.Call(t, r.cs, "one_count", map[string]any{}))
	api := func(method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer s3cret")
		req.Header.Set(operatorkey.Header, operatorKeyOf(t, home))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	routertest.WaitFor(t, "the approval on the dashboard", func() bool {
		_, body := api("GET", "/api/approvals", "")
		return strings.Contains(body, `"id":"`+id+`"`)
	})
	if status, body := api("POST", "/api/approvals/deny", `{"id":"`+id+`"}`); status != 200 {
		t.Fatalf("deny: %d %s", status, body)
	}
	res := routertest.Call(t, r.cs, "one_count", map[string]any{})
	if routertest.Text(res) != policy.DeniedApprovalText("one_count", id) {
		t.Errorf("the retry after the dashboard's deny: %q", routertest.Text(res))
	}
	if !auditHas(t, home, "approval_deny", id, "decided by the operator in the dashboard") {
		t.Errorf("the dashboard's denial of %s is not in the audit log", id)
	}
	// Unauthenticated callers get nothing; a foreign Host is refused.
	res2, err := http.Get(base + "/api/approvals")
	if err != nil || res2.StatusCode != 401 {
		t.Errorf("without the token: %v %v", res2.StatusCode, err)
	}
	req, _ := http.NewRequest("GET", base+"/api/auth/status", nil)
	req.Host = "rebind.example:8899"
	if res3, err := http.DefaultClient.Do(req); err != nil || res3.StatusCode != http.StatusForbidden {
		t.Errorf("a foreign Host header: %v %v", res3.StatusCode, err)
	}
	var st map[string]any
	if _, body := api("GET", "/api/auth/status", ""); json.Unmarshal([]byte(body), &st) != nil || st["role"] != "admin" || st["mode"] != "token" {
		t.Errorf("auth status: %s", body)
	}
	// SIGTERM stops it, even with a live stream open.
	stream, _ := http.NewRequest("GET", base+"/api/approvals/events", nil)
	stream.Header.Set("Authorization", "Bearer s3cret")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if sres, err := http.DefaultClient.Do(stream.WithContext(ctx)); err == nil {
		defer sres.Body.Close()
	}
	_ = dash.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- dash.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("the dashboard did not stop on SIGTERM")
	}
}

// Beyond loopback only with a token.
func TestDashboardRefusesAnOpenNetworkAddressWithoutToken(t *testing.T) {
	cmd := exec.Command(testutil.Evokore(t), "dashboard")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + cmd.Dir, "EVOKORE_HOME=" + cmd.Dir, "EVOKORE_DASHBOARD_HOST=0.0.0.0", "EVOKORE_DASHBOARD_PORT=0"}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "only with EVOKORE_DASHBOARD_TOKEN") {
		t.Errorf("exit %v: %s", err, out)
	}
}

// The boundary in front of a real dashboard process: a same-user process
// that can load its pages (cookie and CSRF token included) but cannot
// read the operator key approves nothing, however it spells the approve
// route; the held call of a real router stays held. The operator, signed
// in with the one-time link the dashboard printed, approves through any
// of the spellings that reach the route, and the model's retry runs once.
func TestDashboardProcessDecidesOnlyForTheOperatorKey(t *testing.T) {
	perms := testutil.WriteFile(t, t.TempDir(), "permissions.yml", "rules:\n  one_count: require_approval\n")
	r := startRouter(t, "EVOKORE_PERMISSIONS_PATH="+perms, "EVOKORE_APPROVALS_MODE=operator")
	r.childPids(t)
	home := filepath.Join(r.dir, "home")
	base, signIn, _ := startDashboardSignIn(t, home)
	id := routertest.HeldApproval(t, routertest.Call(t, r.cs, "one_count", map[string]any{}))

	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(method, path, cookie, csrf, body, form string) (*http.Response, string) {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "text/html")
		req.Header.Set("Content-Type", "application/json")
		if form != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
			req.Header.Set("X-CSRF-Token", csrf)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	csrfOf := regexp.MustCompile(`<meta name="csrf-token" content="([0-9a-f]{64})">`)
	session := func(path, cookie string) (string, string) {
		res, body := send("GET", path, cookie, "", "", "")
		m := csrfOf.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("GET %s: %d, no CSRF token", path, res.StatusCode)
		}
		if c := res.Header.Get("Set-Cookie"); c != "" {
			cookie = strings.SplitN(c, ";", 2)[0]
		}
		return cookie, m[1]
	}
	routertest.WaitFor(t, "the approval on the dashboard", func() bool {
		_, body := send("GET", "/api/approvals", "", "", "", "")
		return strings.Contains(body, `"id":"`+id+`"`)
	})
	cookie, csrf := session("/approvals", "")
	body := `{"id":"` + id + `"}`
	spellings := []string{"/api/approvals/approve", "/api/%61pprovals/approve", "/api/approvals/%61pprove", "//api/approvals/approve",
		"/api//approvals/approve", "/api/./approvals/approve", "/api/x/../approvals/approve", "/static/../api/approvals/approve",
		"/api/approvals/approve/", "/api%2Fapprovals%2Fapprove", "/API/approvals/approve", "/api/APPROVALS/approve"}
	for _, p := range spellings {
		for _, c := range []string{"", cookie} {
			if res, got := send("POST", p, c, csrf, body, ""); res.StatusCode < 400 {
				t.Errorf("POST %s (cookie %v) without the operator key: %d %s", p, c != "", res.StatusCode, got)
			}
		}
	}
	if got := routertest.HeldApproval(t, routertest.Call(t, r.cs, "one_count", map[string]any{})); got != id {
		t.Fatalf("the held approval changed to %s", got)
	}
	if got := routertest.Text(routertest.Call(t, r.cs, "one_read_count", map[string]any{})); got != "calls: 0" {
		t.Fatalf("the held call ran: %s", got)
	}

	// The operator follows the printed link and presses its button.
	linkPath := strings.TrimPrefix(signIn, base)
	opCookie, opCSRF := session(linkPath, "")
	code := linkPath[strings.Index(linkPath, "code=")+len("code="):]
	res, _ := send("POST", "/login", opCookie, opCSRF, "csrf_token="+opCSRF+"&code="+code, "form")
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in with the printed link: %d", res.StatusCode)
	}
	opCookie, opCSRF = session("/approvals", strings.SplitN(res.Header.Get("Set-Cookie"), ";", 2)[0])
	if res, got := send("POST", "/api/%61pprovals/./approve", opCookie, opCSRF, body, ""); res.StatusCode != 200 {
		t.Fatalf("the operator's approve: %d %s", res.StatusCode, got)
	}
	if text, isErr := routertest.CallText(t, r.cs, "one_count", map[string]any{}); isErr {
		t.Errorf("the retry after the operator approved: %s", text)
	}
	if got := routertest.Text(routertest.Call(t, r.cs, "one_read_count", map[string]any{})); got != "calls: 1" {
		t.Errorf("the approved call ran %s times", got)
	}
}

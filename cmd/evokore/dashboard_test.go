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

	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

var dashboardListening = regexp.MustCompile(`Dashboard listening on (http://127\.0\.0\.1:\d+)`)

// startDashboard runs `evokore dashboard` on a free port and returns its
// URL.
func startDashboard(t *testing.T, home string, env ...string) (string, *exec.Cmd) {
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
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return m[1], cmd
		}
	}
	t.Fatalf("the dashboard never said where it listens")
	return "", nil
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

package dashboard_test

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evokore/evokore/internal/dashboard"
	"github.com/evokore/evokore/internal/operatorkey"
	"github.com/evokore/evokore/internal/policy"
)

const heldID = "00c0ffee00c0ffee"

// holdOne files a pending approval as a live router (this process) does.
func holdOne(t *testing.T, home string) {
	t.Helper()
	writeLines(t, filepath.Join(home, "approvals", "pending-op.json"), map[string]any{"pid": os.Getpid(), "router": "op",
		"approvals": []map[string]any{{"id": heldID, "toolName": "fx_count", "session": "s", "state": "pending",
			"createdAt": time.Now().UnixMilli(), "expiresAt": time.Now().Add(time.Hour).UnixMilli(), "router": "op"}}})
}

func stateOf(t *testing.T, home string) string {
	t.Helper()
	list, err := policy.ListPending(home, time.Now())
	if err != nil || len(list) != 1 {
		t.Fatalf("pending approvals: %+v %v", list, err)
	}
	return list[0].State
}

// Deciding an approval takes the operator key, whatever else the caller
// holds: in local mode a browser session with its CSRF token (what any
// same-user process gets by loading a page), in token mode the token
// (which a process can read from the environment or a .env). A wrong key
// counts toward the lockout. With the key (a header, or a browser signed
// in with it) the role decides as before.
func TestDecidingNeedsTheOperatorKey(t *testing.T) {
	for _, mode := range []string{"local", "token"} {
		t.Run(mode, func(t *testing.T) {
			home := t.TempDir()
			holdOne(t, home)
			opts := dashboard.Options{Home: home}
			if mode == "token" {
				opts.Token, opts.Role = secret, "admin"
			}
			_, base := served(t, opts)
			hdr := map[string]string{"Content-Type": "application/json"}
			if mode == "token" {
				hdr["Authorization"] = "Bearer " + secret
			} else {
				cookie, csrf := browserSession(t, base+"/approvals")
				hdr["Cookie"], hdr["X-CSRF-Token"] = cookie, csrf
			}
			for _, verdict := range []string{"approve", "deny"} {
				r := do(t, "POST", base+"/api/approvals/"+verdict, hdr, `{"id":"`+heldID+`"}`)
				if r.status != 403 || !strings.Contains(r.body, "operator key") {
					t.Errorf("%s without the key: %d %s", verdict, r.status, r.body)
				}
			}
			page := do(t, "GET", base+"/approvals", map[string]string{"Authorization": hdr["Authorization"], "Cookie": hdr["Cookie"], "Accept": "text/html"}, "")
			if strings.Contains(page.body, `class="approve"`) || strings.Contains(page.body, `class="deny"`) || !strings.Contains(page.body, `id="operator-needed"`) {
				t.Errorf("the approvals page offers Approve or Deny without the key:\n%s", page.body)
			}
			if got := stateOf(t, home); got != policy.StatePending {
				t.Fatalf("without the key the approval became %s", got)
			}
			wrong := map[string]string{operatorkey.Header: strings.Repeat("0", 64)}
			for k, v := range hdr {
				wrong[k] = v
			}
			for i := range 5 {
				if r := do(t, "POST", base+"/api/approvals/approve", wrong, `{"id":"`+heldID+`"}`); r.status != 403 {
					t.Errorf("wrong key %d: %d %s", i, r.status, r.body)
				}
			}
			if r := do(t, "POST", base+"/api/approvals/approve", withKey(t, home, hdr), `{"id":"`+heldID+`"}`); r.status != 429 {
				t.Errorf("after five wrong keys the right one: %d, want 429 (locked out)", r.status)
			}
			if got := stateOf(t, home); got != policy.StatePending {
				t.Fatalf("a wrong key decided: %s", got)
			}
		})
	}
	home := t.TempDir()
	holdOne(t, home)
	_, base := served(t, dashboard.Options{Home: home, Token: secret, Role: "admin"})
	hdr := withKey(t, home, map[string]string{"Authorization": "Bearer " + secret, "Content-Type": "application/json"})
	if r := do(t, "POST", base+"/api/approvals/approve", hdr, `{"id":"`+heldID+`"}`); r.status != 200 {
		t.Fatalf("approve with the token and the key: %d %s", r.status, r.body)
	}
	if got := stateOf(t, home); got != policy.StateApproved {
		t.Errorf("after approving with the key: %s", got)
	}
}

// The path a request is judged by is the path it is served at: every
// spelling of the approve route (percent-escapes, doubled slashes, dot
// segments, a trailing slash, escaped slashes, other letter case) is
// refused without the operator key, and the held call stays pending;
// spellings that reach the route approve with the key.
func TestEverySpellingOfTheApproveRouteNeedsTheKey(t *testing.T) {
	spellings := []string{"/api/%61pprovals/approve", "/api/approvals/%61pprove", "/%61pi/approvals/approve",
		"//api/approvals/approve", "/api//approvals/approve", "/api/./approvals/approve", "/api/x/../approvals/approve",
		"/static/../api/approvals/approve", "/api/approvals/approve/", "/api%2Fapprovals%2Fapprove", "/api/approvals%2fapprove",
		"/API/approvals/approve", "/api/Approvals/approve", "/api/approvals/APPROVE", "/api/%2E/approvals/approve"}
	home := t.TempDir()
	holdOne(t, home)
	_, base := served(t, dashboard.Options{Home: home})
	cookie, csrf := browserSession(t, base+"/approvals")
	hdr := map[string]string{"Cookie": cookie, "X-CSRF-Token": csrf, "Content-Type": "application/json"}
	for _, p := range spellings {
		r := do(t, "POST", base+p, hdr, `{"id":"`+heldID+`"}`)
		if r.status == 200 || r.status/100 == 3 {
			t.Errorf("POST %s without the key: %d %s", p, r.status, r.body)
		}
	}
	if got := stateOf(t, home); got != policy.StatePending {
		t.Fatalf("a spelling of the approve route decided without the key: %s", got)
	}
	// With the key, the lower-case spellings are the route itself.
	r := do(t, "POST", base+"/api/%61pprovals/./approve", withKey(t, home, hdr), `{"id":"`+heldID+`"}`)
	if r.status != 200 || stateOf(t, home) != policy.StateApproved {
		t.Errorf("POST /api/%%61pprovals/./approve with the key: %d %s", r.status, r.body)
	}
}

// The sign-in link the dashboard prints works once: its button signs the
// browser in as the operator; loading the link spends nothing (a browser
// preloading it must not), and a second use, or an unknown code, signs
// no one in.
func TestSignInCodeWorksOnce(t *testing.T) {
	home := t.TempDir()
	holdOne(t, home)
	clk := &clock{now: time.Now()}
	d, base := served(t, dashboard.Options{Home: home, Now: clk.Now})
	code := d.SignInCode()
	signIn := func(code string) (int, string) {
		cookie, csrf := browserSession(t, base+"/login?code="+code)
		r := do(t, "POST", base+"/login", map[string]string{"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"},
			url.Values{"csrf_token": {csrf}, "code": {code}}.Encode())
		return r.status, strings.SplitN(r.header.Get("Set-Cookie"), ";", 2)[0]
	}
	if page := do(t, "GET", base+"/login?code="+code, map[string]string{"Accept": "text/html"}, ""); page.status != 200 || !strings.Contains(page.body, `id="use-code"`) {
		t.Fatalf("the sign-in link: %d", page.status)
	}
	status, cookie := signIn(code)
	if status != 303 {
		t.Fatalf("the code after its page was loaded twice: %d", status)
	}
	page := do(t, "GET", base+"/approvals", map[string]string{"Cookie": cookie, "Accept": "text/html"}, "")
	if !strings.Contains(page.body, `class="approve"`) {
		t.Errorf("signed in with the code, the approvals page offers no Approve")
	}
	if status, _ := signIn(code); status != 401 {
		t.Errorf("the same code again: %d, want 401", status)
	}
	if status, _ := signIn(strings.Repeat("ab", 32)); status != 401 {
		t.Errorf("an unknown code: %d, want 401", status)
	}
	late := d.SignInCode()
	clk.Advance(11 * time.Minute)
	if status, _ := signIn(late); status != 401 {
		t.Errorf("a code past its 10 minutes: %d, want 401", status)
	}
}

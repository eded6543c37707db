package main_test

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/testutil"
)

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// doctorEnv is a user whose config holds servers, with the default
// ports moved to free ones so the machine's other listeners do not
// decide the outcome.
func doctorEnv(t *testing.T, servers map[string]any) *connectEnv {
	e := newConnectEnv(t)
	testutil.WriteJSON(t, e.evokore, "mcp.config.json", map[string]any{"servers": servers})
	e.env = append(e.env, "EVOKORE_HTTP_PORT="+freePort(t), "EVOKORE_DASHBOARD_PORT="+freePort(t), "VOICE_SIDECAR_PORT="+freePort(t))
	return e
}

func fixtureChild(t *testing.T) map[string]any {
	return map[string]any{"command": testutil.FixtureServer(t)}
}

func TestDoctorAllGreenExitsZero(t *testing.T) {
	e := doctorEnv(t, map[string]any{"fixture": fixtureChild(t)})
	r := e.run("doctor")
	if r.code != 0 || !strings.Contains(r.stdout, "all checks passed") || !regexp.MustCompile(`(?m)^ok    server 'fixture' boots \(\d+ tools\)$`).MatchString(r.stdout) {
		t.Fatalf("doctor: %+v", r)
	}
	if strings.Contains(r.stdout, "FAIL") {
		t.Fatalf("a check failed on a good setup:\n%s", r.stdout)
	}
}

// TestDoctorNamesEachProblemAndItsFix breaks one thing at a time; each
// run exits 1 and names the problem and the fix.
func TestDoctorNamesEachProblemAndItsFix(t *testing.T) {
	cases := []struct {
		name    string
		servers func(t *testing.T) map[string]any
		setup   func(t *testing.T, e *connectEnv)
		problem string
		fix     string
		detail  string
	}{
		{name: "missing command",
			servers: func(t *testing.T) map[string]any {
				return map[string]any{"fixture": fixtureChild(t), "fetch": map[string]any{"command": "uvx", "args": []string{"mcp-server-fetch"}}}
			},
			setup:   func(t *testing.T, e *connectEnv) { e.env = append(e.env, "PATH="+t.TempDir()) },
			problem: "server 'fetch': command 'uvx' is not found", fix: "install uv (it brings uvx), or write its absolute path in "},
		{name: "failing child",
			servers: func(t *testing.T) map[string]any {
				return map[string]any{"broken": map[string]any{"command": "sh", "args": []string{"-c", "echo 'cannot open the database' >&2; exit 3"}}}
			},
			problem: "server 'broken' failed to boot", fix: "run its command by hand", detail: "        | cannot open the database"},
		{name: "unwritable home",
			servers: func(t *testing.T) map[string]any { return map[string]any{} },
			setup: func(t *testing.T, e *connectEnv) {
				// A file where a directory must be: unwritable even for root.
				blocker := testutil.WriteFile(t, t.TempDir(), "blocker", "")
				e.env = append(e.env, "EVOKORE_HOME="+filepath.Join(blocker, "home"), "EVOKORE_MCP_CONFIG_PATH="+filepath.Join(e.evokore, "mcp.config.json"))
			},
			problem: "cannot be created", fix: "or set EVOKORE_HOME to a directory you own"},
		{name: "home others can write",
			servers: func(t *testing.T) map[string]any { return map[string]any{} },
			setup: func(t *testing.T, e *connectEnv) {
				// Its files decide approvals and trust: a home anyone can
				// write lets anyone decide them.
				if runtime.GOOS == "windows" {
					t.Skip("no mode bits or owner to judge by")
				}
				if err := os.Chmod(e.evokore, 0o777); err != nil {
					t.Fatal(err)
				}
			},
			problem: "can be written by other users (-rwxrwxrwx)", fix: "chmod 700 "},
		{name: "unreadable pins",
			servers: func(t *testing.T) map[string]any { return map[string]any{} },
			setup:   func(t *testing.T, e *connectEnv) { testutil.WriteFile(t, e.evokore, "pins.json", "{not json") },
			problem: "pins.json cannot be read", fix: "or remove it: every tool is then pinned afresh"},
		{name: "unreadable decisions",
			servers: func(t *testing.T) map[string]any { return map[string]any{} },
			setup: func(t *testing.T, e *connectEnv) {
				testutil.WriteFile(t, filepath.Join(e.evokore, "approvals"), "decisions.jsonl", "approve everything\n")
			},
			problem: "no approval-gated call runs until it is fixed", fix: "remove or correct the line it names"},
		{name: "unreadable trust",
			servers: func(t *testing.T) map[string]any { return map[string]any{} },
			setup:   func(t *testing.T, e *connectEnv) { testutil.WriteFile(t, e.evokore, "trusted.json", "[") },
			problem: "trusted.json cannot be read", fix: "run 'evokore trust' again in each project you trust"},
		{name: "port taken",
			servers: func(t *testing.T) map[string]any { return map[string]any{} },
			setup: func(t *testing.T, e *connectEnv) {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { l.Close() })
				e.env = append(e.env, "EVOKORE_HTTP_PORT="+strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
			},
			problem: "for evokore serve --http is taken", fix: "set EVOKORE_HTTP_PORT to a free port"},
		{name: "self-reference",
			servers: func(t *testing.T) map[string]any {
				return map[string]any{"router": map[string]any{"command": testutil.Evokore(t), "args": []string{"serve"}}}
			},
			problem: "server 'router' would start evokore itself", fix: "remove 'router' from "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := doctorEnv(t, tc.servers(t))
			if tc.setup != nil {
				tc.setup(t, e)
			}
			// The last value of a variable wins in exec's environment.
			r := e.run("doctor")
			if r.code != 1 || !strings.Contains(r.stdout, "FAIL  ") || !strings.Contains(r.stdout, tc.problem) {
				t.Fatalf("doctor does not name %q: %+v", tc.problem, r)
			}
			// The fix follows the problem.
			at := strings.Index(r.stdout, tc.problem)
			rest := r.stdout[at:]
			if next := strings.Index(rest[1:], "\nFAIL  "); next >= 0 {
				rest = rest[:next+1]
			}
			if !strings.Contains(rest, "      fix: ") || !strings.Contains(rest, tc.fix) {
				t.Fatalf("no fix %q under the problem:\n%s", tc.fix, r.stdout)
			}
			if tc.detail != "" && !strings.Contains(rest, tc.detail) {
				t.Fatalf("the child's stderr is not shown:\n%s", r.stdout)
			}
			if !strings.Contains(r.stdout, "problem(s)") {
				t.Fatalf("no count: %s", r.stdout)
			}
		})
	}
}

// TestDoctorSeesAConnectedClient: after connect, doctor reports the
// client; when the executable the entry runs is gone it says so.
func TestDoctorSeesAConnectedClient(t *testing.T) {
	e := doctorEnv(t, map[string]any{})
	cursor := testutil.WriteFile(t, filepath.Join(e.home, ".cursor"), "mcp.json", `{"mcpServers": {}}`)
	if r := e.run("connect", "cursor"); r.code != 0 {
		t.Fatalf("connect: %+v", r)
	}
	if r := e.run("doctor"); r.code != 0 || !strings.Contains(r.stdout, "ok    Cursor is connected ("+cursor+")") {
		t.Fatalf("doctor: %+v", r)
	}
	gone, _ := json.Marshal(filepath.Join(t.TempDir(), "evokore"))
	testutil.WriteFile(t, filepath.Dir(cursor), "mcp.json", `{"mcpServers": {"evokore": {"command": `+string(gone)+`, "args": ["serve"]}}}`)
	if r := e.run("doctor"); r.code != 1 || !strings.Contains(r.stdout, "Cursor runs evokore from ") || !strings.Contains(r.stdout, "fix: evokore connect cursor") {
		t.Fatalf("doctor with a stale entry: %+v", r)
	}
	_ = os.Remove(cursor)
}

// TestVetAndDoctorCheckTheUsersPermissions: with no ./permissions.yml,
// serve reads $EVOKORE_HOME/permissions.yml, so a typo there (which
// denies every tool no shipped rule names) is found by vet and doctor,
// and doctor's fix names a vet command that finds it too.
func TestVetAndDoctorCheckTheUsersPermissions(t *testing.T) {
	e := doctorEnv(t, map[string]any{})
	perms := testutil.WriteFile(t, e.evokore, "permissions.yml", "rules:\n  describe_tool: alow\n")
	at := perms + ":2:"
	if r := e.run("vet"); r.code != 1 || !strings.Contains(r.stdout, at) {
		t.Fatalf("vet does not report the user's permissions.yml: %+v", r)
	}
	r := e.run("doctor")
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL  "+at) {
		t.Fatalf("doctor does not report the user's permissions.yml: %+v", r)
	}
	if vr := runFix(t, e, fixOf(t, r.stdout, at)); vr.code != 1 || !strings.Contains(vr.stdout, at) {
		t.Fatalf("the vet command of doctor's fix does not find it: %+v", vr)
	}
	// A project file the user has not trusted is not what serve reads:
	// doctor still judges the user's file.
	testutil.WriteFile(t, e.wd, "permissions.yml", "rules: {}\n")
	if r := e.run("doctor"); r.code != 1 || !strings.Contains(r.stdout, "FAIL  "+at) || !strings.Contains(r.stdout, "permissions.yml is ignored") {
		t.Fatalf("doctor beside an untrusted project file: %+v", r)
	}
	if err := os.Remove(filepath.Join(e.wd, "permissions.yml")); err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, e.evokore, "permissions.yml", "rules:\n  describe_tool: allow\n")
	if r := e.run("vet"); r.code != 0 || !strings.Contains(r.stdout, "read permissions.yml: "+perms) {
		t.Fatalf("vet after the fix: %+v", r)
	}
	if r := e.run("doctor"); r.code != 0 || !strings.Contains(r.stdout, perms) {
		t.Fatalf("doctor after the fix: %+v", r)
	}
}

// fixOf is the fix doctor printed under the problem starting with
// problem.
func fixOf(t *testing.T, stdout, problem string) string {
	t.Helper()
	at := strings.Index(stdout, problem)
	if at < 0 {
		t.Fatalf("no problem %q in:\n%s", problem, stdout)
	}
	m := regexp.MustCompile(`(?m)^      fix: (.*)$`).FindStringSubmatch(stdout[at:])
	if m == nil {
		t.Fatalf("no fix under %q in:\n%s", problem, stdout)
	}
	return m[1]
}

// runFix runs the evokore command a fix quotes ('evokore …'), as the user
// would in the directory doctor ran in.
func runFix(t *testing.T, e *connectEnv, fix string) runResult {
	t.Helper()
	m := regexp.MustCompile(`'evokore ([^']*)'`).FindStringSubmatch(fix)
	if m == nil {
		t.Fatalf("the fix names no evokore command: %q", fix)
	}
	return e.run(strings.Fields(m[1])...)
}

// TestDoctorsFixesWorkOnTheFileTheyName breaks one thing at a time, reads
// the problem and the fix doctor prints, does what the fix says to the
// file or with the command it names, and runs doctor again: every check
// passes. A fix that names a command which cannot read the broken file,
// or a file other than the broken one, fails here.
func TestDoctorsFixesWorkOnTheFileTheyName(t *testing.T) {
	cases := []struct {
		name    string
		servers func(t *testing.T) map[string]any
		// brk breaks one thing; problem matches doctor's FAIL line
		// (its groups are what apply reads); apply does what the fix says.
		brk     func(t *testing.T, e *connectEnv)
		problem string
		apply   func(t *testing.T, e *connectEnv, m []string, fix string)
	}{
		{name: "config schema error",
			brk: func(t *testing.T, e *connectEnv) {
				// The user's config, which doctor falls back to and vet
				// does not find by itself.
				testutil.WriteFile(t, e.evokore, "mcp.config.json", `{"servers": {"fx": {"command": 7}}}`)
			},
			problem: `FAIL  (\S+/mcp\.config\.json):\d+:\d+`,
			apply: func(t *testing.T, e *connectEnv, m []string, fix string) {
				if r := runFix(t, e, fix); r.code != 1 || !strings.Contains(r.stdout, m[1]) {
					t.Fatalf("the vet command of the fix does not see the broken file: %+v", r)
				}
				testutil.WriteFile(t, filepath.Dir(m[1]), filepath.Base(m[1]), `{"servers": {}}`)
				if r := runFix(t, e, fix); r.code != 0 {
					t.Fatalf("the vet command of the fix after correcting: %+v", r)
				}
			}},
		{name: "missing command",
			servers: func(t *testing.T) map[string]any {
				return map[string]any{"fx": map[string]any{"command": filepath.Base(testutil.FixtureServer(t))}}
			},
			problem: `FAIL  server 'fx': command '(\S+)' is not found`,
			apply: func(t *testing.T, e *connectEnv, m []string, fix string) {
				file := regexp.MustCompile(`write its absolute path in (\S+)$`).FindStringSubmatch(fix)
				if file == nil {
					t.Fatalf("the fix names no file: %q", fix)
				}
				testutil.WriteJSON(t, filepath.Dir(file[1]), filepath.Base(file[1]), map[string]any{"servers": map[string]any{"fx": fixtureChild(t)}})
			}},
		{name: "self-reference",
			servers: func(t *testing.T) map[string]any {
				return map[string]any{"fx": fixtureChild(t), "router": map[string]any{"command": testutil.Evokore(t), "args": []string{"serve"}}}
			},
			problem: `FAIL  server 'router' would start evokore itself`,
			apply: func(t *testing.T, e *connectEnv, _ []string, fix string) {
				m := regexp.MustCompile(`^remove '(\S+)' from (\S+):`).FindStringSubmatch(fix)
				if m == nil {
					t.Fatalf("the fix names no server and file: %q", fix)
				}
				var doc map[string]map[string]any
				b, err := os.ReadFile(m[2])
				if err != nil || json.Unmarshal(b, &doc) != nil {
					t.Fatalf("read %s: %v", m[2], err)
				}
				delete(doc["servers"], m[1])
				testutil.WriteJSON(t, filepath.Dir(m[2]), filepath.Base(m[2]), doc)
			}},
		{name: "home others can write",
			brk: func(t *testing.T, e *connectEnv) {
				if runtime.GOOS == "windows" {
					t.Skip("no mode bits to judge by")
				}
				if err := os.Chmod(e.evokore, 0o777); err != nil {
					t.Fatal(err)
				}
			},
			problem: `FAIL  EVOKORE_HOME \S+ can be written by other users`,
			apply: func(t *testing.T, e *connectEnv, _ []string, fix string) {
				m := regexp.MustCompile(`^chmod 700 (\S+) `).FindStringSubmatch(fix)
				if m == nil {
					t.Fatalf("the fix names no chmod: %q", fix)
				}
				if err := os.Chmod(m[1], 0o700); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "unreadable pins",
			brk:     func(t *testing.T, e *connectEnv) { testutil.WriteFile(t, e.evokore, "pins.json", "{not json") },
			problem: `FAIL  tool pins (\S+) cannot be read`,
			apply: func(t *testing.T, e *connectEnv, m []string, fix string) {
				// Whatever command the fix names must read the broken file.
				if regexp.MustCompile(`'evokore `).MatchString(fix) {
					if r := runFix(t, e, fix); r.code != 0 {
						t.Fatalf("the command the fix names fails on the broken file: %+v", r)
					}
				}
				if !strings.Contains(fix, "remove it") {
					t.Fatalf("the fix does not say to remove it: %q", fix)
				}
				if err := os.Remove(m[1]); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "unreadable decision",
			brk: func(t *testing.T, e *connectEnv) {
				testutil.WriteFile(t, filepath.Join(e.evokore, "approvals"), "decisions.jsonl",
					`{"id":"a1","decision":"approved","at":1}`+"\napprove everything\n"+`{"id":"a2","decision":"denied","at":2}`+"\n")
			},
			problem: `FAIL  approval decisions (\S+) \(line (\d+)`,
			apply: func(t *testing.T, e *connectEnv, m []string, fix string) {
				if !strings.Contains(fix, "remove or correct the line it names") {
					t.Fatalf("fix: %q", fix)
				}
				b, err := os.ReadFile(m[1])
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.SplitAfter(string(b), "\n")
				n, _ := strconv.Atoi(m[2])
				if n < 1 || n > len(lines) {
					t.Fatalf("line %d of %d", n, len(lines))
				}
				testutil.WriteFile(t, filepath.Dir(m[1]), filepath.Base(m[1]), strings.Join(slices.Delete(lines, n-1, n), ""))
			}},
		{name: "unreadable trust record",
			brk:     func(t *testing.T, e *connectEnv) { testutil.WriteFile(t, e.evokore, "trusted.json", "[") },
			problem: `FAIL  trusted projects (\S+) cannot be read`,
			apply: func(t *testing.T, e *connectEnv, m []string, fix string) {
				if !strings.HasPrefix(fix, "remove it, then") {
					t.Fatalf("fix: %q", fix)
				}
				if err := os.Remove(m[1]); err != nil {
					t.Fatal(err)
				}
				if r := runFix(t, e, fix); r.code != 0 {
					t.Fatalf("%s: %+v", fix, r)
				}
			}},
		{name: "untrusted project permissions",
			brk:     func(t *testing.T, e *connectEnv) { testutil.WriteFile(t, e.wd, "permissions.yml", "rules: {}\n") },
			problem: `FAIL  \S+/permissions\.yml is ignored`,
			apply: func(t *testing.T, e *connectEnv, _ []string, fix string) {
				if r := runFix(t, e, fix); r.code != 0 {
					t.Fatalf("%s: %+v", fix, r)
				}
			}},
		{name: "untrusted project settings",
			brk:     func(t *testing.T, e *connectEnv) { testutil.WriteFile(t, e.wd, ".env", "EVOKORE_ROLE=readonly\n") },
			problem: `FAIL  \S+/\.env sets EVOKORE_ROLE, ignored`,
			apply: func(t *testing.T, e *connectEnv, _ []string, fix string) {
				if r := runFix(t, e, fix); r.code != 0 {
					t.Fatalf("%s: %+v", fix, r)
				}
			}},
		{name: "port taken",
			brk: func(t *testing.T, e *connectEnv) {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { l.Close() })
				e.env = append(e.env, "EVOKORE_HTTP_PORT="+strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
			},
			problem: `FAIL  \S+ for evokore serve --http is taken`,
			apply: func(t *testing.T, e *connectEnv, _ []string, fix string) {
				m := regexp.MustCompile(`set (\w+) to a free port`).FindStringSubmatch(fix)
				if m == nil {
					t.Fatalf("fix: %q", fix)
				}
				e.env = append(e.env, m[1]+"="+freePort(t))
			}},
		{name: "stale client entry",
			brk: func(t *testing.T, e *connectEnv) {
				gone, _ := json.Marshal(filepath.Join(t.TempDir(), "evokore"))
				testutil.WriteFile(t, filepath.Join(e.home, ".cursor"), "mcp.json", `{"mcpServers": {"evokore": {"command": `+string(gone)+`, "args": ["serve"]}}}`)
			},
			problem: `FAIL  Cursor runs evokore from `,
			apply: func(t *testing.T, e *connectEnv, _ []string, fix string) {
				if !strings.HasPrefix(fix, "evokore ") {
					t.Fatalf("fix: %q", fix)
				}
				if r := e.run(strings.Fields(strings.TrimPrefix(fix, "evokore "))...); r.code != 0 {
					t.Fatalf("%s: %+v", fix, r)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			servers := map[string]any{}
			if tc.servers != nil {
				servers = tc.servers(t)
			}
			e := doctorEnv(t, servers)
			if tc.brk != nil {
				tc.brk(t, e)
			}
			r := e.run("doctor")
			re := regexp.MustCompile(`(?m)^` + tc.problem)
			m := re.FindStringSubmatch(r.stdout)
			if r.code != 1 || m == nil {
				t.Fatalf("doctor does not report %s: %+v", tc.problem, r)
			}
			if n := strings.Count(r.stdout, "FAIL  "); n != 1 {
				t.Fatalf("%d problems, want the one broken on purpose:\n%s", n, r.stdout)
			}
			tc.apply(t, e, m, fixOf(t, r.stdout, m[0]))
			if r := e.run("doctor"); r.code != 0 || strings.Contains(r.stdout, "FAIL") {
				t.Fatalf("doctor after the fix: %+v", r)
			}
		})
	}
}

package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// TestScaleOutThreeReplicasBehindAProxy runs the deployment docs/http.md
// describes with real components: a redis-server, three `evokore serve
// --http` replicas on loopback and a round-robin proxy in front (nginx
// when installed, else the standard library's reverse proxy). One client
// session, through the proxy:
//
//   - its calls land on all three replicas (the pid tool of each replica's
//     own child answers, and each pid descends from a different replica);
//   - a limit of N calls a minute on a child admits N calls in total;
//   - an approval token minted through one replica runs the call once
//     through another, and is refused on every replica after.
func TestScaleOutThreeReplicasBehindAProxy(t *testing.T) {
	bin := testutil.Evokore(t)
	redisURL := testutil.RedisServer(t)
	const limit = 5
	dir := t.TempDir()
	fixture := testutil.FixtureServer(t)
	child := func(extra map[string]any) map[string]any {
		m := map[string]any{"command": fixture, "args": []string{}}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	cfg := testutil.WriteJSON(t, dir, "mcp.config.json", map[string]any{"servers": map[string]any{
		"fx":    child(map[string]any{"rateLimit": map[string]any{"requestsPerMinute": limit}}),
		"gate":  child(nil),
		"probe": child(nil),
	}})
	testutil.WriteFile(t, dir, "permissions.yml", "rules:\n  gate_pid: require_approval\n")

	var replicas []*replica
	for i := range 3 {
		replicas = append(replicas, startReplica(t, bin, filepath.Join(dir, fmt.Sprintf("r%d", i)), []string{
			"EVOKORE_MCP_CONFIG_PATH=" + cfg,
			"EVOKORE_PERMISSIONS_PATH=" + filepath.Join(dir, "permissions.yml"),
			"EVOKORE_APPROVALS_MODE=token",
			"EVOKORE_SESSION_STORE=redis",
			"EVOKORE_REDIS_URL=" + redisURL,
			"EVOKORE_REDIS_KEY_PREFIX=scale:",
		}))
	}
	front := startProxy(t, dir, replicas)
	t.Cleanup(func() {
		if t.Failed() {
			for i, r := range replicas {
				t.Logf("replica %d output:\n%s", i+1, r.out.String())
			}
		}
	})

	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "scale-client", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: front + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	// The replica whose child answered a pid tool.
	whose := func(res *mcp.CallToolResult) int {
		t.Helper()
		pid, err := strconv.Atoi(strings.TrimSpace(routertest.Text(res)))
		if err != nil || res.IsError {
			t.Fatalf("not a pid: %q", routertest.Text(res))
		}
		return replicaOf(t, pid, replicas)
	}

	// Every replica serves the one session.
	seen := map[int]int{}
	for range 6 {
		seen[whose(routertest.Call(t, cs, "probe_pid", map[string]any{}))]++
	}
	if len(seen) != 3 {
		t.Fatalf("the session's calls reached replicas %v, want all three", seen)
	}
	t.Logf("probe calls per replica: %v", seen)

	// N calls a minute, in total.
	passed, by := 0, map[int]int{}
	for i := range 3 * limit {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx_pid", Arguments: map[string]any{}})
		var rpc *jsonrpc.Error
		switch {
		case err == nil:
			passed++
			by[whose(res)]++
		case errors.As(err, &rpc) && strings.HasPrefix(rpc.Message, "Rate limit exceeded for server 'fx'."):
		default:
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if passed != limit || len(by) < 2 {
		t.Fatalf("%d calls passed (by replica %v), want %d in total spread over the replicas", passed, by, limit)
	}
	t.Logf("rate-limited calls passed per replica: %v", by)

	// An approval minted through one replica runs once through another.
	token := routertest.ApprovalToken(t, routertest.Call(t, cs, "gate_pid", map[string]any{}))
	minted := minter(t, redisURL, token, replicas)
	ran := whose(routertest.Call(t, cs, "gate_pid", map[string]any{"_evokore_approval_token": token}))
	if ran == minted {
		t.Fatalf("the retry ran on the minting replica %d; the proxy did not rotate", minted)
	}
	t.Logf("token minted via replica %d, ran via replica %d", minted+1, ran+1)
	for range 3 { // a replay on every replica is intercepted again
		routertest.ApprovalToken(t, routertest.Call(t, cs, "gate_pid", map[string]any{"_evokore_approval_token": token}))
	}
}

type replica struct {
	cmd  *exec.Cmd
	addr string
	out  *routertest.Buffer
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func startReplica(t *testing.T, bin, home string, env []string) *replica {
	t.Helper()
	r := &replica{addr: freeAddr(t), out: &routertest.Buffer{}}
	r.cmd = exec.Command(bin, "serve", "--http", r.addr)
	r.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), testutil.RaceEnv, "HOME=" + home, "EVOKORE_HOME=" + home}, env...)
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = r.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = r.cmd.Process.Kill()
			<-done
		}
	})
	waitHealthy(t, "http://"+r.addr, r.out)
	return r
}

// waitHealthy polls /health until it answers 200.
func waitHealthy(t *testing.T, base string, log *routertest.Buffer) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := http.Get(base + "/health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/health never answered 200 (last: %v); output:\n%s", base, err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startProxy puts a round-robin proxy in front of the replicas: nginx
// from the distribution when installed, else httputil.ReverseProxy. In CI
// mode nginx is required: the claim is about a real balancer.
func startProxy(t *testing.T, dir string, replicas []*replica) string {
	t.Helper()
	addr := freeAddr(t)
	nginx, ok := testutil.Find("nginx")
	if !ok && testutil.CIMode() {
		testutil.Require(t, "nginx")
	}
	if ok {
		pdir := filepath.Join(dir, "nginx")
		if err := os.MkdirAll(filepath.Join(pdir, "tmp"), 0o700); err != nil {
			t.Fatal(err)
		}
		var upstream strings.Builder
		for _, r := range replicas {
			fmt.Fprintf(&upstream, "    server %s;\n", r.addr)
		}
		conf := fmt.Sprintf(`daemon off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path %[1]s/tmp/body;
  proxy_temp_path %[1]s/tmp/proxy;
  fastcgi_temp_path %[1]s/tmp/fastcgi;
  uwsgi_temp_path %[1]s/tmp/uwsgi;
  scgi_temp_path %[1]s/tmp/scgi;
  upstream evokore {
%[2]s  }
  server {
    listen %[3]s;
    location / {
      proxy_pass http://evokore;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_buffering off;
      proxy_next_upstream off;
      proxy_read_timeout 20s;
    }
  }
}
`, pdir, upstream.String(), addr)
		file := filepath.Join(pdir, "nginx.conf")
		if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		out := &routertest.Buffer{}
		cmd := exec.Command(nginx, "-c", file, "-p", pdir, "-e", filepath.Join(pdir, "error.log"))
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
		})
		waitHealthy(t, "http://"+addr, out)
		t.Log("proxy: nginx")
		return "http://" + addr
	}
	var targets []*url.URL
	for _, r := range replicas {
		u, _ := url.Parse("http://" + r.addr)
		targets = append(targets, u)
	}
	var next atomic.Uint64
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(targets[(next.Add(1)-1)%uint64(len(targets))])
		},
		FlushInterval: -1,
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: rp}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	t.Log("proxy: net/http/httputil (nginx not installed)")
	return "http://" + l.Addr().String()
}

// replicaOf walks up from pid to the replica process it descends from.
func replicaOf(t *testing.T, pid int, replicas []*replica) int {
	t.Helper()
	for p := pid; p > 1; {
		for i, r := range replicas {
			if r.cmd.Process.Pid == p {
				return i
			}
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			t.Fatalf("pid %d: %v", p, err)
		}
		// The command may hold spaces and parentheses: the ppid is the
		// second field after the last ')'.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if p, err = strconv.Atoi(fields[1]); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatalf("pid %d descends from no replica", pid)
	return -1
}

// minter finds the replica that minted token: the shared approval record
// names its router, "<pid>-<random>".
func minter(t *testing.T, redisURL, token string, replicas []*replica) int {
	t.Helper()
	opts, _ := redis.ParseURL(redisURL)
	c := redis.NewClient(opts)
	defer c.Close()
	raw, err := c.Get(context.Background(), "scale:approval:"+token[:16]).Bytes()
	if err != nil {
		t.Fatalf("the minted approval is not in Redis: %v", err)
	}
	var rec struct {
		Router string `json:"router"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.SplitN(rec.Router, "-", 2)[0])
	for i, r := range replicas {
		if r.cmd.Process.Pid == pid {
			return i
		}
	}
	t.Fatalf("approval router %q is no replica", rec.Router)
	return -1
}

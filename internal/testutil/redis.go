package testutil

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// RedisServer starts a throwaway redis-server on a free loopback port,
// without persistence, stopped when the test ends, and returns its URL.
// Without redis-server the test is skipped, or failed in CI mode (see
// Require).
func RedisServer(t testing.TB) string {
	t.Helper()
	url, _ := RedisServerWithStop(t)
	return url
}

// RedisServerWithStop is RedisServer, and a function that stops the
// server (an outage) before the test ends.
func RedisServerWithStop(t testing.TB) (string, func()) {
	t.Helper()
	url, cmd := startRedis(t)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(stop)
	return url, stop
}

// startRedis starts redis-server on a free port; the caller stops it.
func startRedis(t testing.TB) (string, *exec.Cmd) {
	t.Helper()
	bin := Require(t, "redis-server")
	var last string
	for range 5 {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
			"--appendonly", "no", "--protected-mode", "yes", "--logfile", "")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = cmd.Stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := make(chan bool, 1)
		var log strings.Builder
		go func() {
			sc := bufio.NewScanner(out)
			sent := false
			for sc.Scan() {
				if !sent {
					log.WriteString(sc.Text() + "\n")
				}
				if !sent && strings.Contains(sc.Text(), "Ready to accept connections") {
					ready <- true
					sent = true
				}
			}
			if !sent {
				ready <- false
			}
		}()
		// A wedged redis-server must fail the test, not hang it.
		select {
		case ok := <-ready:
			if ok {
				return fmt.Sprintf("redis://127.0.0.1:%d/0", port), cmd
			}
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			<-ready // the reader is done with the log
		}
		last = log.String() // the port was taken meanwhile, most likely
	}
	t.Fatalf("redis-server did not start:\n%s", last)
	return "", nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

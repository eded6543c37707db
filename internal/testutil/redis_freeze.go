//go:build !windows

package testutil

import (
	"syscall"
	"testing"
)

// RedisServerWithFreeze is RedisServer, and functions that freeze the
// server (SIGSTOP: its port still accepts connections, nothing answers,
// as a wedged or swapped-out Redis does) and thaw it (SIGCONT).
func RedisServerWithFreeze(t testing.TB) (url string, freeze, thaw func()) {
	t.Helper()
	url, cmd := startRedis(t)
	freeze = func() { _ = cmd.Process.Signal(syscall.SIGSTOP) }
	thaw = func() { _ = cmd.Process.Signal(syscall.SIGCONT) }
	t.Cleanup(func() {
		thaw()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return url, freeze, thaw
}

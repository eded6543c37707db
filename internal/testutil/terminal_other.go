//go:build !linux

package testutil

import (
	"os/exec"
	"testing"
)

// Terminal is a pseudo-terminal; the tests open one on Linux only.
type Terminal struct{}

// NewTerminal skips the test: pseudo-terminals are opened on Linux only.
func NewTerminal(t testing.TB) *Terminal {
	t.Skip("pseudo-terminal tests run on Linux")
	return nil
}

// Run is never reached: NewTerminal skipped the test.
func (*Terminal) Run(t testing.TB, cmd *exec.Cmd, typed string) (string, int) { return "", -1 }

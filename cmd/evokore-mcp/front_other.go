//go:build !unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"time"
)

// readFirstFrame reads nothing where the router cannot take over this
// process: the router, a child here, reads stdin itself.
func readFirstFrame(time.Duration) []byte { return nil }

// writeLine is never reached without a first frame.
func writeLine([]byte) bool { return false }

// become runs the router as a child with this process's stdin, stdout
// and stderr, and exits with its status.
func become(router string, args, env []string) error {
	cmd := exec.Command(router, args[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		os.Exit(exit.ExitCode())
	}
	if err == nil {
		os.Exit(0)
	}
	return err
}

//go:build !unix

package skilltools

import "os/exec"

// setProcessGroup has no portable equivalent here; killGroup falls back
// to the process itself.
func setProcessGroup(*exec.Cmd) {}

// killGroup kills the process.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

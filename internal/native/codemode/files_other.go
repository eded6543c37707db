//go:build !linux

package codemode

// sandboxEnv is the sandbox's whole environment: none.
var sandboxEnv = []string{}

// keepFilesFromSandbox: run_code runs on Linux only.
func keepFilesFromSandbox() {}

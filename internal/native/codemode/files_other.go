//go:build !linux

package codemode

// sandboxEnv is the sandbox's whole environment: none.
var sandboxEnv = map[string]string{}

// keepFilesFromSandbox: run_code runs on Linux only.
func keepFilesFromSandbox() {}

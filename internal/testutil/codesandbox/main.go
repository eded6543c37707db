// Command codesandbox is run_code's sandbox alone, for tests whose
// router runs in the test binary: built without the race detector, the
// JavaScript engine runs at the speed a user's does, while the router
// that drives it stays instrumented. The sandbox's own code is
// race-checked by internal/native/codemode's tests, which run it from
// their own (instrumented) binary.
package main

import (
	"fmt"
	"os"

	"github.com/evokore/evokore/internal/native/codemode"
)

func main() {
	if !codemode.IsSandbox(os.Args) {
		fmt.Fprintln(os.Stderr, "codesandbox: run by the router only")
		os.Exit(2)
	}
	os.Exit(codemode.Sandbox(os.Stdin, os.Stdout))
}

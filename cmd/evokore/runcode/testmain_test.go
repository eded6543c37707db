package runcode_test

import (
	"os"
	"testing"

	"github.com/evokore/evokore/internal/native/codemode"
)

// TestMain lets this test binary serve as run_code's sandbox, as the
// evokore binary does for itself: the in-process routers of these tests
// start os.Executable() with codemode.SandboxArg (BenchmarkCodeModeSaving;
// codeRig starts a sandbox built without the race detector).
func TestMain(m *testing.M) {
	if codemode.IsSandbox(os.Args) {
		os.Exit(codemode.Sandbox(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

package status_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/testutil"
)

// TestReadersDoNotLaunchProcesses keeps the packages that only report on
// children (the status tools and resources, the profile preview) away
// from the code that starts processes: the supervisor and the launcher.
// They still reach os/exec through the go-sdk (its command transport) and
// CUE, which nothing here can change.
func TestReadersDoNotLaunchProcesses(t *testing.T) {
	for _, pkg := range []string{"./internal/resources", "./internal/native/routing", "./internal/budget"} {
		cmd := exec.Command("go", "list", "-deps", pkg)
		cmd.Dir = testutil.Root(t)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasSuffix(dep, "/internal/proxy") || strings.HasSuffix(dep, "/internal/procgroup") {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}

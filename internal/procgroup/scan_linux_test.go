package procgroup_test

import (
	"testing"

	"github.com/evokore/evokore/internal/procgroup"
)

func TestLeaderExitTakesItsHelpersAlongByFullScan(t *testing.T) {
	defer procgroup.ScanAll()()
	leaderExitTakesHelpers(t)
}

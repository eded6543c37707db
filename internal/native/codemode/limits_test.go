package codemode_test

import (
	"testing"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native/codemode"
)

// A memory bound too large to count in bytes is reported and keeps its
// default; it never reads as no bound at all.
func TestHugeMemoryBoundStaysABound(t *testing.T) {
	v := config.NewVars(config.NewEnv(map[string]string{"EVOKORE_CODE_MEMORY_MB": "8796093022208"}))
	l := codemode.ReadLimits(v)
	if l.Memory != config.DefaultCodeMemoryMB<<20 {
		t.Errorf("EVOKORE_CODE_MEMORY_MB=2^43 reads as %d bytes, want the default's", l.Memory)
	}
	want := "Ignoring EVOKORE_CODE_MEMORY_MB=8796093022208: want at most 1048576 (1 TiB)."
	if len(v.Warnings) != 1 || v.Warnings[0] != want {
		t.Errorf("warnings %q, want %q", v.Warnings, want)
	}
}

// A total below one program's memory is reported at start: run_code
// would run nothing.
func TestTotalMemoryBelowOneProgramIsReported(t *testing.T) {
	v := config.NewVars(config.NewEnv(map[string]string{"EVOKORE_CODE_MEMORY_MB": "64", "EVOKORE_CODE_TOTAL_MEMORY_MB": "32"}))
	l := codemode.ReadLimits(v)
	if l.Total != 32<<20 || l.Memory != 64<<20 {
		t.Errorf("total %d, memory %d", l.Total, l.Memory)
	}
	want := "EVOKORE_CODE_TOTAL_MEMORY_MB=32 is less than one program's EVOKORE_CODE_MEMORY_MB=64: run_code runs no program."
	if len(v.Warnings) != 1 || v.Warnings[0] != want {
		t.Errorf("warnings %q, want %q", v.Warnings, want)
	}
	if l := codemode.ReadLimits(config.NewVars(config.NewEnv(nil))); l.Total/l.Memory != 4 {
		t.Errorf("the defaults run %d sandboxes at once, want 4", l.Total/l.Memory)
	}
}

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

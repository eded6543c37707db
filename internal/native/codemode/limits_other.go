//go:build !linux

package codemode

import (
	"errors"
	"time"
)

// limitSelf fails: only Linux enforces an address-space limit that the
// Go runtime meets, and run_code never runs unbounded.
func limitSelf(Limits) error { return errors.New("run_code bounds memory on Linux only") }

func cpuUsed() time.Duration { return 0 }

// Supported reports whether this platform can bound a run's memory.
const Supported = false

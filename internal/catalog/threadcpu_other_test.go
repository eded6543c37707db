//go:build !linux

package catalog

import "time"

// threadCPU is not measured off Linux: the CPU-time percentiles are left
// out.
func threadCPU() time.Duration { return 0 }

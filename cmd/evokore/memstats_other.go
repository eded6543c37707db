//go:build !unix

package main

// debugMemStats is the benchmarks' allocation probe, which needs SIGUSR1;
// elsewhere it does nothing.
func debugMemStats() (stop func()) { return func() {} }

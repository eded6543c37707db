//go:build !linux

package main_test

import "testing"

// waitPipeFull needs /proc to see a pipe fill.
func waitPipeFull(t *testing.T, _ string) {
	t.Skip("seeing a child's stdin pipe fill needs Linux's /proc")
}

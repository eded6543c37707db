//go:build !unix

package statefile

import "os"

// Lock does nothing where advisory locks are not available; appends of
// one short line are still written with a single call.
func Lock(*os.File) error { return nil }

// Unlock releases Lock.
func Unlock(*os.File) {}

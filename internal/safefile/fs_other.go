//go:build !linux

package safefile

import "os"

// onPseudoFS is Linux-only; elsewhere the name check in Open and the
// regular-file check stand alone.
func onPseudoFS(*os.File) bool { return false }

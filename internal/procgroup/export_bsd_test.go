//go:build unix && !linux

package procgroup

// DisableWatchdog does nothing: only Linux has the watchdog.
func DisableWatchdog() {}

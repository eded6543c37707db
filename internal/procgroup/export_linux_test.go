package procgroup

// DisableWatchdog keeps this process from starting the watchdog, so a
// test can see what holds with the parent-death signal alone.
func DisableWatchdog() { watchdogOff = true }

// ScanAll makes tree walks read every process, as on a kernel without
// /proc/<pid>/task/*/children; the returned func restores the walk.
func ScanAll() func() {
	walkChildren = false
	return func() { walkChildren = true }
}

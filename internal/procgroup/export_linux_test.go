package procgroup

// DisableWatchdog keeps this process from starting the watchdog, so a
// test can see what holds with the parent-death signal alone.
func DisableWatchdog() { watchdogOff = true }

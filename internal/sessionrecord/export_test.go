package sessionrecord

// KeepLedgers sets how many ledgers a recorder holds in memory until the
// test ends.
func KeepLedgers(n int) (restore func()) {
	old := ledgersKept
	ledgersKept = n
	return func() { ledgersKept = old }
}

// LedgersHeld is how many ledgers r holds in memory; call it after Close.
func (r *Recorder) LedgersHeld() int { return len(r.ledgers) }

package fleet

// pgid is zero: Windows has no process groups.
func pgid(int) int { return 0 }

//go:build unix

package fleet

// pgid is the agent's process group: it leads a group of its own.
func pgid(pid int) int { return pid }

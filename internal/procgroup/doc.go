// Package procgroup is the one launcher of evokore: every process the
// router starts (child MCP servers, plugin tools, execute_skill runs,
// run_code sandboxes, fleet agents, worker commands) goes through
// [Command], so they all share one environment policy and one way to end.
//
// # What a started process gets
//
//   - Its environment from [Env]: the base allowlist of the router's
//     variables (enough to find programs, a home, a locale, a temp dir and
//     a proxy; never another server's secrets), or the whole environment
//     where the configuration says so (inheritEnv), plus its own variables.
//   - A process group of its own, so one signal reaches the helpers it
//     starts (npx starts node, a test runner starts compilers).
//   - On Linux the parent-death signal (SIGKILL when the router dies, even
//     by SIGKILL).
//   - A tree mark: the variable EVOKORE_PROCTREE_<router>=<n>, which its
//     descendants inherit. It is how a descendant that left the group
//     (setsid) and lost its parent is still found; the same idea as a
//     build server's process-tree cookie.
//
// # How it ends
//
// [Cmd.Stop] is bounded: close stdin, wait the grace, SIGTERM the tree,
// wait the grace, SIGKILL the tree. Context cancellation SIGKILLs the
// tree. When the leader exits, by itself or not, the rest of its tree is
// killed while the leader is still an unreaped zombie (so its group id
// cannot have been reused): helpers of a child that exited cleanly do not
// survive it. "The tree" is, on Linux: the process group, every process
// whose parent links lead to the leader (read from /proc/<pid>/stat), and
// every process carrying the tree mark (read from /proc/<pid>/environ).
// Elsewhere on Unix it is the group; on Windows the process alone.
//
// # Containment on Linux, and what holds after SIGKILL of the router
//
// The router makes itself a child subreaper (PR_SET_CHILD_SUBREAPER), so
// an orphaned descendant is re-parented to the router instead of init;
// the router reaps those orphans when they exit, and a tree walk still
// finds them. An orphan is told apart as a zombie child outside the
// router's process group that no Cmd waits for: a process the router
// starts through os/exec stays in its group, or is started with
// [StartOwn] so that its own Wait reaps it. A cgroup per tree would be exact, but needs a delegated,
// writable cgroup v2 hierarchy, which containers and CI rarely give; the
// /proc walk plus the tree mark works for any unprivileged user, so that
// is the choice.
//
// The parent-death signal reaches only the router's direct children. For
// the rest, the first [Cmd.Start] also starts a watchdog: the router's own
// executable re-run in a watchdog mode (package proctree's init picks it
// up before the router's other packages initialise, so the watchdog costs
// the memory of a small Go program, not a second router), holding the
// read end of a pipe whose write end only the router holds. When the
// router dies, by SIGKILL or otherwise, the pipe reads EOF and the
// watchdog SIGKILLs every process carrying this router's tree mark,
// repeating until none is left, then exits.
//
// So after SIGKILL of the router: its direct children die by the kernel's
// parent-death signal, and every descendant that kept its inherited
// environment, in the group or not, setsid or not, dies by the watchdog.
// What can escape: a descendant that both replaced its whole environment
// (env -i) and left the process group, when the router is SIGKILLed (while
// the router lives, the parent-link walk and the subreaper still find it);
// a process that made itself non-dumpable, whose environ cannot be read;
// and everything if the watchdog itself is SIGKILLed first.
//
// # Liveness
//
// [Alive] answers "is this process alive?" the way the managers need it:
// a zombie that nobody has reaped yet counts as dead.
package procgroup

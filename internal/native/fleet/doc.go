// Package fleet owns the agent processes a model starts with fleet_spawn,
// and fleet_claim, fleet_release and fleet_status over them.
//
// Each agent runs through the launcher (package procgroup): a process
// group of its own, standard streams on the null device, the launcher's
// base and toolchain allowlists of the router's environment (never another
// server's secrets). Releasing it kills its whole tree with SIGKILL, so
// whatever the agent started goes too, setsid helpers included. On Linux
// the tree also dies with the router, and the router's shutdown (Close)
// releases every agent still running: no agent outlives the router.
//
// Agents are numbered FA-001, FA-002, … per router. The registry is in
// memory only, as in EVOKORE-MCP: the processes it names cannot outlive the
// router, so there is nothing to resume after a restart.
//
// A fleet resource is a label on the agent (fleet_claim marks an agent as
// working on it). Exclusive locks are the claims package's business;
// orchestration runs take real claims for their agents.
//
// Liveness: an agent is alive until its process has exited (the router
// reaps it, so an exited agent never lingers as a zombie) and while
// kill(pid, 0) still finds it.
package fleet

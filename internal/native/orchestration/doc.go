// Package orchestration owns orchestrated runs: orchestration_start,
// orchestration_stop and orchestration_status. A run starts several fleet
// agents as one unit and takes a claim on each agent's resource.
//
// Starting is all or nothing: when an agent fails to start or its claim is
// held by someone else, the agents already started are killed, the claims
// already taken are released, and the run is recorded with status "error".
//
// A run's claims belong to its agents: each records the agent's pid, so a
// dead agent's claim is stale for everyone else at once, and while the
// agent lives the run renews the claim every half TTL (ttlMs, default
// 30 s), so the TTL bounds how long a claim outlives a router that died
// without cleaning up rather than how long an agent may work.
//
// An agent that exits while its run is active turns the run "degraded"
// with a reason, and its claim is released. EVOKORE-MCP only noticed a
// dead agent after 60 s without liveness, probing on status calls; here the
// exit is observed when it happens.
//
// Stopping a run (or the router's shutdown) releases its claims and kills
// its agents' process groups. Runs live in memory, as their agents do.
package orchestration

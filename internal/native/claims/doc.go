// Package claims owns exclusive, expiring claims on named resources: the
// claim_acquire, claim_release, claim_list and claim_sweep tools, and the
// Store that orchestration runs use for their agents.
//
// A claim is a file EVOKORE_HOME/.claims/<sha1(resource)>.lock holding
// {resource, agentId, pid, acquired, ttlMs, expiresAt}, the layout
// EVOKORE-MCP used, so both can share a home. A claim is stale once it has
// expired or its process is gone; a stale claim is taken over by the next
// acquirer and removed by a sweep.
//
// Exclusivity holds across goroutines and processes: a claim file appears
// complete or not at all (written aside, then hard-linked into place,
// which fails if the name exists), and every read-modify step (taking over
// a stale claim, releasing, sweeping) runs under an advisory lock on
// .claims/.mutex, so two acquirers can never both remove the same stale
// claim and both win.
//
// Whose process is a claim's? A claim taken through claim_acquire records
// the router's parent process: the MCP client (the agent) that started the
// router over stdio. The claim so survives a restart of the router under
// the same client and dies with the client. Claims an orchestration run
// takes for its agents record the agent's own process.
package claims

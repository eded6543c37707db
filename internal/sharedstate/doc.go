// Package sharedstate is the state evokore replicas share through Redis
// when EVOKORE_SESSION_STORE=redis: the rate-limit buckets and the
// approvals, behind the backends package policy defines (RateBackend,
// ApprovalBackend), and the MCP tasks, behind package tasks' Backend.
// Sessions themselves are package sessionstore's.
//
// Keys, all under EVOKORE_REDIS_KEY_PREFIX (default "evokore:"):
//
//   - ratelimit:<server> and ratelimit:<server>/<tool>: a bucket's
//     theoretical arrival time (GCRA) in microseconds of Redis's clock,
//     expiring when the bucket is full again.
//   - approval:<id>: one approval's JSON, expiring with the approval.
//   - approval-binding:<binding>: the id of the operator-mode approval
//     filed for a call, so two replicas asked the same call file one.
//   - approvals: a sorted set of live approval ids by expiry, for lists.
//   - task:<id>: one task's record (tasks.Record) as JSON, expiring with
//     the task; tasks:<owner hash> the ids of an owner's tasks by
//     creation (tasks.go).
//   - approval-key: the HMAC key tokens are signed with, when
//     EVOKORE_APPROVAL_KEY_FILE does not give one; created once with SET
//     NX by whichever replica starts first, never expiring.
//
// Every check-and-change of limits and approvals runs as one Lua script,
// and Redis runs scripts one at a time, so replicas never race: a bucket
// is spent all-or-none across its tool and server keys, and of many
// replicas consuming one approval exactly one gets it (the script
// deletes it). Times come from Redis (TIME), so replicas' clocks need not
// agree. The scripts compute keys from the prefix, so a Redis Cluster is
// not supported. A task's change is a transaction under WATCH instead,
// run again on what the other replica wrote when two raced.
//
// When Redis does not answer, calls it would limit or approve are
// refused, not waved through.
package sharedstate

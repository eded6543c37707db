// Package tasks owns the router's MCP tasks: tool calls that answer with a
// handle at once and are polled for their result, as both protocol eras
// define them (the experimental tasks of 2025-11-25: tasks/get,
// tasks/result, tasks/list, tasks/cancel; the tasks extension of
// 2026-07-28, io.modelcontextprotocol/tasks: tasks/get, tasks/update,
// tasks/cancel). The router runs the call itself, so any tool, native or
// a child's that knows nothing of tasks, can run as one.
//
// A Manager runs each task's call (a Step) on a goroutine of its own,
// detached from the request that started it, and keeps the task's Record
// in a Backend: in process (Memory), or shared by replicas (package
// sharedstate's Redis backend), so that a task made through one replica
// is read, answered and cancelled through any other. The replica that
// started a task runs it to its end; the others see it through the store:
//
//	Start ──▶ step ─▶ answer ─┬─ complete, error ─▶ completed / failed
//	           ▲              └─ input_required ─▶ input_required ─┐
//	           └──── the client's answers (Update, any replica) ◀──┘
//	Cancel (any replica) ─▶ cancelled; the replica running it stops the call
//
// Start waits a little (Spec.After) for the call's first answer: a call
// that answers in that time, or asks for input in it (a multi round-trip
// request of 2026-07-28, answered before any task exists), is answered
// directly and no task is made; a call that takes longer becomes a task,
// stored before its handle is returned, so a tasks/get on any replica
// finds it at once.
//
// Bounds: a task lives for its TTL from its creation (Settings.TTL at
// most, a client's shorter ttl wins), its result is kept only within
// Settings.MaxResult bytes (a larger one fails the task, saying so), and
// one caller runs at most Settings.MaxRunning tasks at once on a replica.
// A task is visible only to its owner (the caller's tenant and subject,
// or its session when it has no subject): another owner's id is unknown.
//
// A replica refreshes the heartbeat of the tasks it runs; a task whose
// runner stopped (a crash, a restart, a replica gone) is failed, saying
// so, by the first reader that sees its heartbeat stale, and a replica
// that shuts down fails the tasks it still runs: no task stays working
// for ever.
//
// How a task looks on the wire is per era (wire.go); this package holds
// no transport and no router: the server composes it with both.
package tasks

// Package telemetry owns the router's usage counters: get_telemetry,
// reset_telemetry, and the router.Observer that counts every dispatched
// call.
//
// Collection is opt-in (EVOKORE_TELEMETRY=true) and aggregate only: call
// and error counts, mean latency, session counts. Nothing names a tool, an
// argument or a user. Disabled, both tools answer with the text that says
// how to enable it, and nothing is written.
//
// Enabled, the counters live in EVOKORE_HOME/telemetry/metrics.json in
// EVOKORE-MCP's shape (telemetryVersion 2, plus latencyTotalMs and
// latencyCount so the mean survives a restart exactly). They are loaded at
// start, written atomically a second after the last change, and written
// once more when the router closes.
//
// Counted: calls that reached their tool (a call refused by permissions or
// by schema validation never ran), and as errors those that ended in a
// JSON-RPC error or an isError result. Sessions are counted as the router
// sees them come and go: a session is created when it is first seen
// connected or calling, and expired once it is no longer connected;
// activeCount is the number connected now. The auth counters belong to the
// HTTP transport and stay zero in stdio.
package telemetry

// Package memory owns agents' durable memory: memory_store, memory_search
// and memory_list, over a bbolt database per session under
// EVOKORE_HOME/memory.
//
// An entry is keyed by (session, key) and its id is sha256("<sid>::<key>"),
// as in EVOKORE-MCP; storing a key again updates it and keeps its creation
// time. Each kind has a default lifetime (knowledge, context and decision
// never expire; working 1 h, task 4 h, result 24 h, error 7 d, metric 30 d);
// ttl_ms overrides it and 0 or less means "never". Expired entries are
// never returned and are purged on the session's next write.
//
// Storage: bbolt, pure Go, one file per session (memory/<sid>.db, the
// layout the original's SQLite backend used). bbolt locks its file for the
// whole time it is open, so the store opens a session's file for each
// operation only: several routers sharing one EVOKORE_HOME (one per
// client, as stdio clients run them) then take turns instead of one of
// them failing to open its memory.
//
// A damaged file costs one call, never the router: bbolt panics on some
// corruptions, so each open and transaction runs under a recover (with
// memory faults turned into panics too). A file found corrupt, or
// anything but a regular file in its place, is renamed to
// <name>.corrupt-<UTC time> for the user to inspect, the router says so on
// stderr, the call that found it answers an error, and the next call
// starts a fresh database. A busy file (another router holding its lock)
// is not corruption and is never moved.
package memory

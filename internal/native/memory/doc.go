// Package memory owns agents' durable memory: memory_store, memory_search
// and memory_list, over a SQLite database per session under
// EVOKORE_HOME/memory.
//
// An entry is keyed by (session, key) and its id is sha256("<sid>::<key>"),
// as in EVOKORE-MCP; storing a key again updates it and keeps its creation
// time. Each kind has a default lifetime (knowledge, context and decision
// never expire; working 1 h, task 4 h, result 24 h, error 7 d, metric 30 d);
// ttl_ms overrides it and 0 or less means "never". Expired entries are
// never returned and are purged on the session's next write.
//
// Storage is EVOKORE-MCP's own: memory/<sid>.db with its memories table
// and indexes, through modernc.org/sqlite (pure Go, no cgo), so a user
// moving from the original keeps their memory and can inspect it with
// sqlite3. The original's fallback store, memory/<sid>.json, is imported
// into a new database the first time the session is used; the JSON file
// is left in place. Several routers share one EVOKORE_HOME (one per
// client, as stdio clients run them): the database is in WAL mode, each
// operation opens it for one transaction, and a writer waits for another
// (busy timeout) instead of failing.
//
// A damaged file costs one call, never the router: each open and
// transaction runs under a recover (with memory faults turned into panics
// too). A file SQLite finds corrupt or not a database, or anything but a
// regular file in its place, is renamed (with its WAL) to
// <name>.corrupt-<UTC time> for the user to inspect, the router says so on
// stderr, the call that found it answers an error, and the next call
// starts a fresh database. A busy file (another router writing) is not
// corruption and is never moved.
package memory

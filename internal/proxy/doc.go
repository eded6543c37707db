// Package proxy supervises the child MCP servers: it boots them in
// parallel after the client's handshake, registers their tools in the
// catalog as `<serverId>_<tool>`, forwards calls with a per-call timeout,
// passes progress, log messages and the children's own requests through
// to the calling client, notices a child's death the moment its transport
// closes, restarts it with capped exponential backoff, and on shutdown
// leaves no process behind (stdio children start through package
// procgroup). A child's stdout reaches the MCP transport through a filter
// that skips and logs non-JSON lines (banners, stray prints), and its
// stderr is forwarded line by line, long lines truncated, never blocking.
//
// The configured children are one immutable set; Supervisor.Reconfigure
// replaces it after a reload, keeping unchanged children running, and
// drains a removed or replaced child's calls before stopping it.
//
// A child is one goroutine that owns its process and client session; the
// rest of the router sees it only through the catalog and [Supervisor]'s
// methods. It must not make policy decisions: those run before a call
// reaches it.
package proxy

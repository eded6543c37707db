// Package nav owns the navigation-anchor tools, nav_get_map and
// nav_read_anchor: cheap ways for a model to find its way around a large
// file through `@AI:NAV[...]` comments instead of reading it whole.
//
// An anchor is `@AI:NAV[SEC:id] description`, `@AI:NAV[END:id]` or
// `@AI:NAV[INS:id] description` anywhere on a line; ids are lower-case
// letters, digits and dashes. A SEC and the END with the same id bound a
// section; INS marks an insertion point, listed under every section that
// contains it.
//
// Files are streamed line by line and never held whole: the map keeps only
// the anchors, and a read keeps at most the window it returns (the lines
// before the anchor sit in a ring buffer until the anchor turns up). A
// window reaches at most 500 lines on either side of its anchor.
//
// The path comes from the model, so the tools read only the project's
// files: the real path (symlinks followed) must lie under the directory
// the router was started in (config.Settings.ProjectDir) and not under
// EVOKORE_HOME, whose records belong to tenants and shared stores. The
// file is then opened through package safefile: regular files only (no
// devices, FIFOs or /proc), not ones the router could read only by
// privilege. Every file the tools will not read, outside the project or
// missing alike, gets one error text, so they reveal nothing about it. Reading stops
// at MaxFileBytes or when the call is cancelled; a line is kept up to
// MaxLineBytes (a longer one is shown cut), and a map lists at most
// MaxAnchors anchors, so a call's memory is bounded whatever the file.
package nav

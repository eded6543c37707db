// Package config turns the files a user writes into typed Go values.
//
// It owns every file format the router reads: mcp.config.json,
// permissions.yml, evokore.cue, skill frontmatter, voices.json and plugin
// manifests. Each is validated against the CUE definitions embedded from
// package schema, defaults are unified in, and the result is decoded once
// into plain structs. Every problem comes back as a [Diagnostic] that says
// file:line:col, and all of them are reported, not just the first.
//
// This is the only package that evaluates CUE at run time; everything after
// it sees Go values. It also owns the process environment as the router
// sees it ([Env]: .env merged under the real environment), `${VAR}`
// interpolation, and the EVOKORE_* settings.
//
// It must not know about children, sessions or policy decisions.
package config

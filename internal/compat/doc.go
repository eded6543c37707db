// Package compat holds no code: its test is the one golden record of the
// client-visible texts that clients and scripts written for EVOKORE-MCP
// match on (reference Appendix B), rendered by the functions that write
// them. A change to any of them shows up as a diff of
// testdata/texts.golden; run `go test ./internal/compat -update` to accept
// it on purpose.
package compat

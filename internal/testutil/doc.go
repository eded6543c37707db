// Package testutil is shared by the tests: it finds the module root,
// builds the evokore binary and the fixture MCP server once per test
// binary, locates the npm reference servers, and writes config files.
//
// Nothing outside tests imports it.
package testutil

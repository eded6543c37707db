// Package e2e_test holds cmd/evokore's longest end-to-end test groups
// (the Claude Code hooks, hooks install, requests piped up to EOF): they
// run the evokore binary as a user would, like the tests beside main.go,
// in a package of their own so that neither package nears the test
// timeout on a two-core machine with the race detector (issue 32).
package e2e_test

//go:build !race

package testutil

// Race is false without -race; see race_on.go.
const Race = false

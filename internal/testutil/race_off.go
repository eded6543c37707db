//go:build !race

package testutil

// raceEnabled is false without -race; see race_on.go.
const raceEnabled = false

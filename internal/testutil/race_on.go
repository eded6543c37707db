//go:build race

package testutil

// raceEnabled is true when the test binary is built with -race: the
// programs it builds for subprocess tests are then built with -race too,
// so a data race in the router fails the test that drives it.
const raceEnabled = true

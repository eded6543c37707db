//go:build race

package testutil

// Race is true when the test binary is built with -race: the
// programs it builds for subprocess tests are then built with -race too,
// so a data race in the router fails the test that drives it. Such a
// program runs several times slower, so a test that bounds the CPU of
// real work gives it more.
const Race = true

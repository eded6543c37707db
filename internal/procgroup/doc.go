// Package procgroup starts the processes native managers run for a model
// (plugin tools, workers, fleet agents) so that none outlives its owner:
// each runs in its own process group, which a single signal ends, and on
// Linux the kernel kills it if the router dies.
//
// It also answers "is this process alive?" the way the managers need it:
// a zombie that nobody has reaped yet counts as dead.
package procgroup

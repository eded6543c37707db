// Package proctree reads processes from /proc on Linux (their parent
// links, groups, states and environments) for the launcher, and holds the
// launcher's watchdog mode (see package procgroup).
//
// The watchdog is the router's own executable re-run with WatchdogEnv
// set. Go initialises packages in import-path order as soon as their own
// imports are ready, so a package that imports only a few low standard
// packages runs its init before the rest of the binary's: this package
// imports nothing else on purpose, and its init turns the process into
// the watchdog before the router's big packages initialise, which keeps
// the watchdog's memory to that of a small Go program.
package proctree

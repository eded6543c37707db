package config

import (
	"strconv"
	"strings"
	"time"
)

// Vars reads declared variables from an environment, one typed accessor
// per way a value is read. Each takes the variable's default from the
// generated table, so evokore.cue stays the one place a default is
// written, and a value it cannot use is added to Warnings, naming the
// variable and the value, and replaced as the accessor says. Every
// package reads its own variables through one Vars; the caller reports
// the warnings.
type Vars struct {
	env      Env
	Warnings []string
}

// NewVars reads from env.
func NewVars(env Env) *Vars { return &Vars{env: env} }

// Set reports whether name is set to something other than blanks.
func (v *Vars) Set(name string) bool { return strings.TrimSpace(v.env.Get(name)) != "" }

// Raw is name's value as set, or "" when unset.
func (v *Vars) Raw(name string) string { return v.env.Get(name) }

// Warn adds a warning about name's value, for a reader whose value has a
// rule of its own (a range, an enum).
func (v *Vars) Warn(message string) { v.Warnings = append(v.Warnings, message) }

// declared is name's declaration; an undeclared name (which
// TestCodeReadsOnlyDeclaredVariables rules out) has no default.
func declared(name string) Variable {
	d, _ := LookupVariable(name)
	return d
}

// Path is a path or other verbatim text: the value as set, else the
// default. Blanks count as unset.
func (v *Vars) Path(name string) string {
	if raw := v.env.Get(name); strings.TrimSpace(raw) != "" {
		return raw
	}
	return declared(name).Default
}

// String is the value trimmed of blanks, else the default.
func (v *Vars) String(name string) string {
	if raw := strings.TrimSpace(v.env.Get(name)); raw != "" {
		return raw
	}
	return declared(name).Default
}

// Bool reads a bool variable with [ParseBool]; unset or blank is the
// default. A value ParseBool does not know is reported and reads the
// default too: a typo must not turn off a switch that is on by default
// (the audit log).
func (v *Vars) Bool(name string) bool {
	def := declared(name).Default == "true"
	return v.bool(name, def, "the default, "+strconv.FormatBool(def))
}

// StrictBool is Bool for a security switch whose true is the strict side
// (default deny): a value ParseBool does not know is reported and reads
// true (a typo must not fail open); unset or blank is still the default.
func (v *Vars) StrictBool(name string) bool {
	return v.bool(name, true, "true, the strict choice")
}

// bool reads name, taking bad for a value ParseBool does not know; using
// says what that is, in the warning.
func (v *Vars) bool(name string, bad bool, using string) bool {
	raw := v.env.Get(name)
	if strings.TrimSpace(raw) == "" {
		return declared(name).Default == "true"
	}
	b, ok := ParseBool(raw)
	if !ok {
		v.Warn("Ignoring " + name + "=" + strconv.Quote(raw) + ": want 1, true, on or yes (or 0, false, off, no). Using " + using + ".")
		return bad
	}
	return b
}

// Millis reads a duration_ms variable: a positive number of
// milliseconds. Unset or blank is def when def is not zero (a default
// computed at run time), else the declared default; anything else that
// is not positive is reported and reads the same.
func (v *Vars) Millis(name string, def time.Duration) time.Duration {
	if def == 0 {
		n, _ := strconv.Atoi(declared(name).Default)
		def = time.Duration(n) * time.Millisecond
	}
	raw, ok := v.env.Lookup(name)
	if !ok || strings.TrimSpace(raw) == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(raw))
	if err != nil || n <= 0 {
		v.Warn("Ignoring " + name + "=" + strconv.Quote(raw) + ": want a positive number of milliseconds.")
		return def
	}
	return time.Duration(n) * time.Millisecond
}

// Positive reads an int variable that must be positive; unset or blank is
// the default, anything else not positive is reported and reads the
// default.
func (v *Vars) Positive(name string) int {
	def, _ := strconv.Atoi(declared(name).Default)
	raw := strings.TrimSpace(v.env.Get(name))
	if raw == "" {
		return def
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n <= 0 {
		v.Warn("Ignoring " + name + "=" + strconv.Quote(raw) + ": want a positive number.")
		return def
	}
	return n
}

// List reads a list variable: its comma-separated values, blanks dropped.
func (v *Vars) List(name string) []string {
	var out []string
	for _, p := range strings.Split(v.env.Get(name), ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

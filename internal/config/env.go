package config

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Env is the environment as the router sees it: the variables of a .env
// file with the real process environment over them, so a variable set by
// the user's shell always wins. It is a value; nothing here mutates the
// process environment.
type Env struct {
	vars map[string]string
}

// NewEnv builds an Env from explicit variables (tests, child setups).
func NewEnv(vars map[string]string) Env {
	m := make(map[string]string, len(vars))
	for k, v := range vars {
		m[k] = v
	}
	return Env{vars: m}
}

// ProcessEnv is the process environment alone.
func ProcessEnv() Env {
	m := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return Env{vars: m}
}

// LoadEnv reads a .env file under the process environment: a variable set
// in the real environment always wins. A missing file is not an error.
func LoadEnv(path string) (Env, Diagnostics) {
	env, ds, _ := LoadProjectEnv(path, true)
	return env, ds
}

// IsSecurityKey reports whether a variable is a security setting: one a
// project directory's .env may set only after `evokore trust`. evokore.cue
// marks them (security: true); every private-address opt-in
// (EVOKORE_*_ALLOW_PRIVATE) is one, declared or not.
func IsSecurityKey(key string) bool {
	v, _ := LookupVariable(key)
	return v.Security || (strings.HasPrefix(key, "EVOKORE_") && strings.HasSuffix(key, "_ALLOW_PRIVATE"))
}

// LoadProjectEnv is LoadEnv for a .env the user may not have written: when
// trusted is false, its security settings are left out and their names
// returned, so the caller can say they were ignored.
func LoadProjectEnv(path string, trusted bool) (Env, Diagnostics, []string) {
	env := ProcessEnv()
	src, err := ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return env, nil, nil
	}
	if err != nil {
		d := ReadProblem(path, err)
		d.Severity, d.Code = SeverityWarning, "dotenv"
		return env, Diagnostics{d}, nil
	}
	vars, ds := ParseDotEnv(path, src)
	var ignored []string
	for k, v := range vars {
		if _, set := env.vars[k]; set {
			continue
		}
		if !trusted && IsSecurityKey(k) {
			ignored = append(ignored, k)
			continue
		}
		env.vars[k] = v
	}
	slices.Sort(ignored)
	return env, ds, ignored
}

// ParseDotEnv parses KEY=VALUE lines: blank lines and # comments are
// skipped, "export " is allowed, single quotes are literal, double quotes
// understand \n, \t, \" and \\, and an unquoted value ends at " #".
func ParseDotEnv(file string, src []byte) (map[string]string, Diagnostics) {
	vars := map[string]string{}
	var ds Diagnostics
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		key, val, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			ds = append(ds, warnAt(Position{File: file, Line: n, Col: 1}, "dotenv", "expected KEY=VALUE"))
			continue
		}
		val = strings.TrimSpace(val)
		switch {
		case len(val) >= 2 && val[0] == '\'' && val[len(val)-1] == '\'':
			val = val[1 : len(val)-1]
		case len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"':
			if unq, err := strconv.Unquote(val); err == nil {
				val = unq
			} else {
				val = val[1 : len(val)-1]
			}
		default:
			if i := strings.Index(val, " #"); i >= 0 {
				val = strings.TrimSpace(val[:i])
			}
		}
		vars[key] = val
	}
	return vars, ds
}

// Lookup returns the variable and whether it is set (an empty value is set).
func (e Env) Lookup(key string) (string, bool) {
	v, ok := e.vars[key]
	return v, ok
}

// Get returns the variable, or "" when it is unset.
func (e Env) Get(key string) string { return e.vars[key] }

// Pairs returns the environment as KEY=VALUE strings for exec.Cmd.
func (e Env) Pairs() []string {
	out := make([]string, 0, len(e.vars))
	for k, v := range e.vars {
		out = append(out, k+"="+v)
	}
	return out
}

// With returns a copy of e with the given variables set.
func (e Env) With(vars map[string]string) Env {
	out := NewEnv(e.vars)
	for k, v := range vars {
		out.vars[k] = v
	}
	return out
}

func warnAt(pos Position, code, format string, args ...any) Diagnostic {
	d := errAt(pos, code, format, args...)
	d.Severity = SeverityWarning
	return d
}

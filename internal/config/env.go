package config

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
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

// LoadEnv reads the .env file at path (a missing file is fine) and puts
// the process environment over it. Lines it cannot parse are returned as
// warnings and skipped.
func LoadEnv(path string) (Env, Diagnostics) {
	env := ProcessEnv()
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return env, nil
	}
	if err != nil {
		return env, Diagnostics{warnAt(Position{File: path}, "dotenv", "%v", err)}
	}
	vars, ds := ParseDotEnv(path, src)
	for k, v := range vars {
		if _, set := env.vars[k]; !set {
			env.vars[k] = v
		}
	}
	return env, ds
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

// Bool reports whether the variable is "true" or "1" (case-insensitive).
func (e Env) Bool(key string) bool {
	switch strings.ToLower(strings.TrimSpace(e.vars[key])) {
	case "true", "1", "yes", "on":
		return true
	}
	return false
}

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

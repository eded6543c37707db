package connect

import (
	"fmt"
	"slices"
)

// codexConversion builds the evokore entry of one of Codex's
// [mcp_servers.NAME] tables. Errors carry the offset in Codex's file of
// the key they refuse.
type codexConversion struct {
	out          *jsonDoc
	env, headers map[string]any
	timeouts     map[string]int64
	// at is where a key of the server is written.
	at func(key ...string) int
}

// convertTOML turns a Codex entry into an evokore server entry (compact
// JSON): strings as written, keys renamed, the variables Codex passes
// by name (env_vars, bearer_token_env_var, env_http_headers) made
// ${NAME} references.
func convertTOML(e map[string]any, at func(key ...string) int) ([]byte, error) {
	cv := &codexConversion{out: &jsonDoc{data: []byte("{}"), plain: []byte("{}")},
		env: map[string]any{}, headers: map[string]any{}, timeouts: map[string]int64{}, at: at}
	for _, k := range sortedKeys(e) {
		if err := cv.key(k, e[k]); err != nil {
			return nil, err
		}
	}
	return cv.finish(e)
}

func (cv *codexConversion) put(k string, v any) {
	r, _ := cv.out.root()
	cv.out.add(r, k, compactJSON(v), false)
}

// refuse is an error at key k.
func (cv *codexConversion) refuse(format string, k string, args ...any) error {
	return at(cv.at(k), format, append([]any{k}, args...)...)
}

func (cv *codexConversion) key(k string, v any) error {
	switch k {
	case "command", "args", "cwd", "url":
		t, err := translateValue(v)
		if err != nil {
			return cv.refuse("%s: %v", k, err)
		}
		cv.put(k, t)
	case "env", "http_headers":
		return cv.table(k, v)
	case "env_vars":
		return cv.envVars(v)
	case "env_http_headers":
		return cv.envHeaders(v)
	case "bearer_token_env_var":
		n, ok := v.(string)
		if !ok || !varName.MatchString(n) {
			return cv.refuse("its %s is not a variable name", k)
		}
		cv.headers["Authorization"] = "Bearer ${" + n + "}"
	case "enabled":
		if b, ok := v.(bool); ok && !b {
			cv.put("disabled", true)
		}
	case "startup_timeout_sec", "startup_timeout_ms", "tool_timeout_sec":
		return cv.timeout(k, v)
	default:
		return cv.refuse("its key '%s' has no equivalent in evokore's config", k)
	}
	return nil
}

// translateValue rewrites the references in a string or a list of them.
// Codex expands none: only evokore's own ${NAME} passes.
func translateValue(v any) (any, error) {
	switch x := v.(type) {
	case string:
		return literalVars.translate(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			t, err := translateValue(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = t
		}
		return out, nil
	}
	return v, nil
}

// table reads env or http_headers: names and values as written.
func (cv *codexConversion) table(k string, v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return cv.refuse("its %s is not a table", k)
	}
	into := cv.env
	if k == "http_headers" {
		into = cv.headers
	}
	for n, x := range m {
		t, err := translateValue(x)
		if err != nil {
			return at(cv.at(k, n), "%s.%s: %v", k, n, err)
		}
		into[n] = t
	}
	return nil
}

// envVars are names Codex passes through from its own environment: a
// reference each, never a value. evokore's entry in Codex passes them
// on to evokore (codexPassEnv).
func (cv *codexConversion) envVars(v any) error {
	list, ok := v.([]any)
	if !ok {
		return cv.refuse("its %s is not a list", "env_vars")
	}
	for _, x := range list {
		n, ok := x.(string)
		if !ok || !varName.MatchString(n) {
			return cv.refuse("its %s holds something other than a variable name", "env_vars")
		}
		cv.env[n] = "${" + n + "}"
	}
	return nil
}

// envHeaders are headers whose values Codex reads from the variables
// named.
func (cv *codexConversion) envHeaders(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return cv.refuse("its %s is not a table", "env_http_headers")
	}
	for n, x := range m {
		name, ok := x.(string)
		if !ok || !varName.MatchString(name) {
			return at(cv.at("env_http_headers", n), "env_http_headers.%s: not a variable name", n)
		}
		cv.headers[n] = "${" + name + "}"
	}
	return nil
}

func (cv *codexConversion) timeout(k string, v any) error {
	n, ok := number(v)
	if !ok {
		return cv.refuse("its %s is not a number", k)
	}
	switch k {
	case "startup_timeout_sec":
		cv.timeouts["bootMs"] = int64(n * 1000)
	case "startup_timeout_ms":
		cv.timeouts["bootMs"] = int64(n)
	default:
		cv.timeouts["requestMs"] = int64(n * 1000)
	}
	return nil
}

// finish writes what several keys add up to: env, the transport and
// headers of a remote server, timeouts.
func (cv *codexConversion) finish(e map[string]any) ([]byte, error) {
	if len(cv.env) > 0 {
		cv.put("env", cv.env)
	}
	if _, ok := e["url"]; ok {
		cv.put("type", "http")
		if len(cv.headers) > 0 {
			cv.put("headers", cv.headers)
		}
	} else if len(cv.headers) > 0 {
		return nil, at(cv.at(), "it sets HTTP headers without a url")
	}
	if len(cv.timeouts) > 0 {
		cv.put("timeouts", cv.timeouts)
	}
	return cv.out.data, nil
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// sortedKeys puts a Codex entry's keys in the order an evokore entry is
// read: what it runs first, then the rest by name.
func sortedKeys(m map[string]any) []string {
	order := []string{"command", "args", "env", "env_vars", "cwd", "url"}
	var out, rest []string
	for _, k := range order {
		if _, ok := m[k]; ok {
			out = append(out, k)
		}
	}
	for k := range m {
		if !slices.Contains(order, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

package config

import (
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// placeholder is `${NAME}`; `${VAR:-default}` is not supported, as in
// EVOKORE-MCP.
var placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{(\w+)\}`) })

// Placeholder is one `${VAR}` reference inside a server definition.
type Placeholder struct {
	// Key names where it was found: "command", "args[1]", "cwd", "url",
	// "headers.<name>" or the env variable's name, as EVOKORE-MCP names it.
	Key string
	// Path locates the value for [MCPConfig.Pos].
	Path []string
	Var  string
}

// field is one interpolated string of a server, with its key and path.
type field struct {
	key  string
	path []string
	val  string
}

// fields lists the interpolated values of s in a fixed order.
func (s *Server) fields() []field {
	out := []field{{"command", []string{"command"}, s.Command}}
	for i, a := range s.Args {
		out = append(out, field{fmt.Sprintf("args[%d]", i), []string{"args", fmt.Sprint(i)}, a})
	}
	out = append(out, field{"cwd", []string{"cwd"}, s.Cwd})
	for i, r := range s.Roots {
		out = append(out, field{fmt.Sprintf("roots[%d]", i), []string{"roots", fmt.Sprint(i)}, r})
	}
	out = append(out, field{"url", []string{"url"}, s.URL})
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		out = append(out, field{"headers." + k, []string{"headers", k}, s.Headers[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		out = append(out, field{k, []string{"env", k}, s.Env[k]})
	}
	if o := s.OAuth; o != nil {
		out = append(out, field{"oauth.clientSecret", []string{"oauth", "clientSecret"}, o.ClientSecret},
			field{"oauth.privateKey", []string{"oauth", "privateKey"}, o.PrivateKey})
	}
	return out
}

// Placeholders lists every `${VAR}` the server refers to.
func (s Server) Placeholders() []Placeholder {
	var out []Placeholder
	for _, f := range s.fields() {
		for _, m := range placeholder().FindAllStringSubmatch(f.val, -1) {
			out = append(out, Placeholder{Key: f.key, Path: append(s.Path(), f.path...), Var: m[1]})
		}
	}
	return out
}

// Resolve returns a copy of s with every placeholder replaced from env,
// and Dir set from the resolved cwd; a stdio server that would start a
// router inside this one is refused (see [Server.SelfReference]). A
// variable that is unset (an empty value counts as set) fails the server
// with EVOKORE-MCP's message, naming the first key that needs it.
func (s Server) Resolve(env Env) (Server, error) {
	r := s
	r.Args = slices.Clone(s.Args)
	r.Env = maps.Clone(s.Env)
	r.Headers = maps.Clone(s.Headers)
	resolve := func(key, in string) (string, error) {
		var missing []string
		out := placeholder().ReplaceAllStringFunc(in, func(m string) string {
			name := m[2 : len(m)-1]
			v, ok := env.Lookup(name)
			if !ok {
				missing = append(missing, m)
			}
			return v
		})
		if missing != nil {
			return "", &UnresolvedError{Server: s.ID, Key: key, Placeholders: slices.Compact(missing)}
		}
		return out, nil
	}
	var err error
	if r.Command, err = resolve("command", r.Command); err != nil {
		return Server{}, err
	}
	for i := range r.Args {
		if r.Args[i], err = resolve(fmt.Sprintf("args[%d]", i), r.Args[i]); err != nil {
			return Server{}, err
		}
	}
	if r.Cwd, err = resolve("cwd", r.Cwd); err != nil {
		return Server{}, err
	}
	r.Dir = r.Cwd
	if s.base != "" && !filepath.IsAbs(r.Cwd) {
		r.Dir = filepath.Join(s.base, r.Cwd)
	}
	r.Roots = slices.Clone(s.Roots)
	for i := range r.Roots {
		if r.Roots[i], err = resolve(fmt.Sprintf("roots[%d]", i), r.Roots[i]); err != nil {
			return Server{}, err
		}
		if s.base != "" && !filepath.IsAbs(r.Roots[i]) {
			r.Roots[i] = filepath.Join(s.base, r.Roots[i])
		}
	}
	if r.URL, err = resolve("url", r.URL); err != nil {
		return Server{}, err
	}
	for _, k := range slices.Sorted(maps.Keys(r.Headers)) {
		if r.Headers[k], err = resolve("headers."+k, r.Headers[k]); err != nil {
			return Server{}, err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.Env)) {
		if r.Env[k], err = resolve(k, r.Env[k]); err != nil {
			return Server{}, err
		}
	}
	if s.OAuth != nil {
		o := *s.OAuth
		o.Scopes = slices.Clone(s.OAuth.Scopes)
		if o.ClientSecret, err = resolve("oauth.clientSecret", o.ClientSecret); err != nil {
			return Server{}, err
		}
		if o.PrivateKey, err = resolve("oauth.privateKey", o.PrivateKey); err != nil {
			return Server{}, err
		}
		r.OAuth = &o
	}
	// Refused here, where the command is final, so no boot path can
	// start a router inside this one.
	if err := r.SelfReference(env); err != nil {
		return Server{}, err
	}
	return r, nil
}

// UnresolvedError is a server whose placeholders name variables that are
// not set. Its text is EVOKORE-MCP's, which scripts match on.
type UnresolvedError struct {
	Server, Key  string
	Placeholders []string
}

func (e *UnresolvedError) Error() string {
	return fmt.Sprintf("Unresolved env placeholder(s) for child server '%s' key '%s': %s",
		e.Server, e.Key, strings.Join(e.Placeholders, ", "))
}

// Redactor returns what hides this server's secrets in any text evokore
// shows (errors, status, stderr): every value a ${VAR} placeholder put
// into its command, args, cwd, url, headers, env or oauth secrets is written back as
// ${VAR}, and the resolved URL's userinfo, query values and literal
// header values become REDACTED. A URL's query or a path segment is where
// an API key most often travels, and a transport error quotes the URL.
func (s Server) Redactor(env Env) *strings.Replacer {
	return strings.NewReplacer(s.RedactPairs(env)...)
}

// RedactPairs are the old/new pairs of Redactor, as strings.NewReplacer
// takes them: the records' scrubber (package redact) also needs the texts
// it replaces, to tell which arguments hold none of them.
func (s Server) RedactPairs(env Env) []string {
	type rep struct{ old, new string }
	var reps []rep
	add := func(old, new string) {
		if len(old) >= 3 {
			reps = append(reps, rep{old, new})
		}
	}
	fields := append([]string{s.Command, s.Cwd, s.URL}, s.Args...)
	for _, v := range s.Headers {
		fields = append(fields, v)
	}
	for _, v := range s.Env {
		fields = append(fields, v)
	}
	if s.OAuth != nil {
		fields = append(fields, s.OAuth.ClientSecret, s.OAuth.PrivateKey)
	}
	for _, f := range fields {
		for _, m := range placeholder().FindAllString(f, -1) {
			if v, ok := env.Lookup(m[2 : len(m)-1]); ok {
				add(v, m)
			}
		}
	}
	for _, v := range s.Headers {
		if !placeholder().MatchString(v) {
			add(v, "REDACTED")
		}
	}
	if r, err := s.Resolve(env); err == nil && r.URL != "" {
		if u, err := url.Parse(r.URL); err == nil {
			if u.User != nil {
				add(u.User.String(), "REDACTED")
			}
			for _, vs := range u.Query() {
				for _, v := range vs {
					add(v, "REDACTED")
					add(url.QueryEscape(v), "REDACTED")
				}
			}
		}
	}
	// Longest first, so a secret that contains another is hidden whole.
	slices.SortFunc(reps, func(a, b rep) int { return len(b.old) - len(a.old) })
	var pairs []string
	for _, r := range reps {
		pairs = append(pairs, r.old, r.new)
	}
	return pairs
}

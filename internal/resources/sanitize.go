package resources

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/evokore/evokore/internal/config"
)

// Redacted replaces every secret in evokore://server/config.
const Redacted = "[REDACTED]"

// urlRedacted replaces secrets inside URLs, where brackets would be
// escaped.
const urlRedacted = "REDACTED"

// SanitizedServer is one child server as evokore://server/config shows
// it: what it runs or reaches, never its credentials.
type SanitizedServer struct {
	Transport string            `json:"transport,omitempty"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	URL       string            `json:"url,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	Disabled  bool              `json:"disabled,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
}

// SanitizedConfig is evokore://server/config.
type SanitizedConfig struct {
	Servers map[string]SanitizedServer `json:"servers"`
}

// sanitizedConfig redacts: every env and header value; credentials and
// secret-looking query values in URLs (in url and in args); the value
// after a secret-looking flag (--token X, --api-key=X); KEY=VALUE args
// with a secret-looking key; and strings shaped like well-known tokens.
// Rate limits, discovery, webhooks and registries are left out.
func (c *Content) sanitizedConfig() SanitizedConfig {
	out := SanitizedConfig{Servers: map[string]SanitizedServer{}}
	if c.o.Config == nil {
		return out
	}
	cfg := c.o.Config()
	if cfg == nil {
		return out
	}
	for _, s := range cfg.Servers {
		out.Servers[s.ID] = sanitizeServer(s)
	}
	return out
}

func sanitizeServer(s config.Server) SanitizedServer {
	ss := SanitizedServer{Transport: s.Transport, Command: redactValue(s.Command), Cwd: s.Cwd, Disabled: s.Disabled}
	if s.URL != "" {
		ss.URL = redactURL(s.URL)
	}
	ss.Args = redactArgs(s.Args)
	if len(s.Env) > 0 {
		ss.Env = map[string]string{}
		for k := range s.Env {
			ss.Env[k] = Redacted
		}
	}
	if len(s.Headers) > 0 {
		ss.Headers = map[string]string{}
		for k := range s.Headers {
			ss.Headers[k] = Redacted
		}
	}
	return ss
}

// secretWords mark a flag, query key or variable as holding a secret.
var secretWords = []string{"token", "secret", "password", "passwd", "passphrase", "apikey", "credential", "auth", "cookie", "session", "signature", "private"}

// secretSegments are whole name segments that mark a secret ("key" alone
// would match "monkey").
var secretSegments = map[string]bool{"key": true, "pwd": true, "pass": true, "sig": true, "pat": true, "jwt": true, "bearer": true, "access": true}

var nameSplit = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9]+`) })

// secretName reports whether a flag, query key or variable name names a
// secret.
func secretName(name string) bool {
	n := strings.ToLower(strings.TrimLeft(name, "-"))
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, seg := range nameSplit().Split(n, -1) {
		if secretSegments[seg] {
			return true
		}
	}
	return strings.HasSuffix(n, "key") || strings.HasSuffix(n, "pw")
}

// knownToken matches strings shaped like common credentials.
var knownToken = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abprs]-|sk-|sk_live_|sk_test_|rk_live_|npm_|AKIA[0-9A-Z]{12}|AIza|eyJ[A-Za-z0-9_-]{8,}\.)[A-Za-z0-9_\-.]*`)
})

// assignment matches NAME=VALUE anywhere in a string: an argument, a
// shell line (`export API_TOKEN=…`), an ODBC connection string
// (`Uid=u;Pwd=…`).
var assignment = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.-]*)=("[^"]*"|'[^']*'|[^\s;&|"']*)`)
})

// redactValue redacts the parts of one string that look secret.
func redactValue(v string) string {
	if strings.Contains(v, "://") && !strings.ContainsAny(v, " \t") {
		return redactURL(v)
	}
	if t := strings.TrimSpace(v); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		if out, ok := redactJSON(t); ok {
			return out
		}
	}
	v = assignment().ReplaceAllStringFunc(v, func(m string) string {
		name, _, _ := strings.Cut(m, "=")
		if secretName(name) {
			return name + "=" + Redacted
		}
		return m
	})
	lower := strings.ToLower(v)
	for _, h := range []string{"authorization:", "x-api-key:", "api-key:", "cookie:", "bearer "} {
		if i := strings.Index(lower, h); i >= 0 {
			return v[:i+len(h)] + " " + Redacted
		}
	}
	v = urlInText().ReplaceAllStringFunc(v, redactURL)
	return knownToken().ReplaceAllString(v, Redacted)
}

// urlInText finds URLs inside a longer string (a shell line).
var urlInText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"']+`) })

// redactJSON redacts the values of secret-named keys at any depth of a
// JSON argument ({"apiKey": "…"}); ok is false when it is not JSON.
func redactJSON(s string) (string, bool) {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return "", false
	}
	var walk func(any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case map[string]any:
			for k, e := range t {
				if secretName(k) {
					t[k] = Redacted
				} else {
					t[k] = walk(e)
				}
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e)
			}
		case string:
			return redactValue(t)
		}
		return x
	}
	b, err := json.Marshal(walk(v))
	if err != nil {
		return Redacted, true
	}
	return string(b), true
}

func redactArgs(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	out := make([]string, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		// -p is a password flag for database clients (mysql -pSECRET,
		// -p SECRET); hiding a port number by mistake costs nothing.
		if a == "-p" && i+1 < len(args) {
			out[i], out[i+1] = a, Redacted
			i++
			continue
		}
		if strings.HasPrefix(a, "-p") && len(a) > 2 && !strings.HasPrefix(a, "--") && !isDigits(a[2:]) && a[2] != '=' {
			out[i] = "-p" + Redacted
			continue
		}
		// -e NAME=value (docker, podman, env-setting wrappers) hands the
		// child a value whatever its name: the name stays, the value not.
		if envFlags[a] && i+1 < len(args) {
			out[i] = a
			i++
			out[i] = redactPair(args[i])
			continue
		}
		if name, pair, ok := strings.Cut(a, "="); ok && envFlags[name] {
			out[i] = name + "=" + redactPair(pair)
			continue
		}
		if strings.HasPrefix(a, "-") {
			name, value, hasValue := strings.Cut(a, "=")
			if hasValue && !secretName(name) {
				// --config={"apiKey": …}: the value may hold secrets.
				out[i] = name + "=" + redactValue(value)
				continue
			}
			if secretName(name) {
				if hasValue {
					out[i] = name + "=" + Redacted
					continue
				}
				out[i] = a
				if i+1 < len(args) {
					i++
					out[i] = Redacted
				}
				continue
			}
		}
		out[i] = redactValue(a)
	}
	return out
}

// envFlags set a child's environment variable from the next argument.
var envFlags = map[string]bool{"-e": true, "--env": true}

// redactPair hides the value of NAME=value; a bare NAME (passed through
// from the environment) has none.
func redactPair(a string) string {
	if name, _, ok := strings.Cut(a, "="); ok {
		return name + "=" + Redacted
	}
	return a
}

// redactURL hides userinfo and secret-looking query and fragment values.
// A URL that does not parse is hidden whole if it could carry a secret.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if strings.ContainsAny(raw, "@?#") {
			return Redacted
		}
		return knownToken().ReplaceAllString(raw, Redacted)
	}
	if u.User != nil {
		u.User = url.User(urlRedacted)
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k, vs := range q {
			if secretName(k) {
				for i := range vs {
					vs[i] = urlRedacted
				}
			} else {
				for i, v := range vs {
					vs[i] = knownToken().ReplaceAllString(v, urlRedacted)
				}
			}
		}
		u.RawQuery = q.Encode()
	}
	if u.Fragment != "" {
		if f, err := url.ParseQuery(u.Fragment); err == nil {
			for k := range f {
				if secretName(k) {
					u.Fragment = urlRedacted
					break
				}
			}
		}
	}
	u.Path = redactPath(u.Host, knownToken().ReplaceAllString(u.Path, urlRedacted))
	u.RawPath = ""
	return u.String()
}

// redactPath hides path segments that are credentials: every segment
// after the first of a webhook URL (Slack, Discord and the like put the
// secret there), and long random-looking segments anywhere.
func redactPath(host, path string) string {
	segs := strings.Split(path, "/")
	webhook := strings.HasPrefix(strings.ToLower(host), "hooks.") || strings.Contains(strings.ToLower(path), "webhook")
	seen := 0
	for i, seg := range segs {
		if seg == "" {
			continue
		}
		seen++
		if (webhook && seen > 1 && !strings.Contains(strings.ToLower(seg), "webhook")) || randomLooking(seg) {
			segs[i] = urlRedacted
		}
	}
	return strings.Join(segs, "/")
}

// randomLooking reports a segment of 20 or more token characters mixing
// letters and digits: an id or key, not a word.
func randomLooking(seg string) bool {
	if len(seg) < 20 {
		return false
	}
	var letters, digits bool
	for _, r := range seg {
		switch {
		case r >= '0' && r <= '9':
			digits = true
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			letters = true
		case r == '-' || r == '_':
		default:
			return false
		}
	}
	return letters && digits
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

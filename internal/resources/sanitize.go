package resources

import (
	"net/url"
	"regexp"
	"strings"

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
	for _, s := range c.o.Config.Servers {
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

var nameSplit = regexp.MustCompile(`[^a-z0-9]+`)

// secretName reports whether a flag, query key or variable name names a
// secret.
func secretName(name string) bool {
	n := strings.ToLower(strings.TrimLeft(name, "-"))
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, seg := range nameSplit.Split(n, -1) {
		if secretSegments[seg] {
			return true
		}
	}
	return strings.HasSuffix(n, "key") || strings.HasSuffix(n, "pw")
}

// knownToken matches strings shaped like common credentials.
var knownToken = regexp.MustCompile(`(ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abprs]-|sk-|sk_live_|sk_test_|rk_live_|npm_|AKIA[0-9A-Z]{12}|AIza|eyJ[A-Za-z0-9_-]{8,}\.)[A-Za-z0-9_\-.]*`)

var envAssign = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)

// redactValue redacts the parts of one string that look secret.
func redactValue(v string) string {
	if strings.Contains(v, "://") {
		return redactURL(v)
	}
	if m := envAssign.FindStringSubmatch(v); m != nil && secretName(m[1]) {
		return m[1] + "=" + Redacted
	}
	lower := strings.ToLower(v)
	for _, h := range []string{"authorization:", "x-api-key:", "api-key:", "cookie:", "bearer "} {
		if i := strings.Index(lower, h); i >= 0 {
			return v[:i+len(h)] + " " + Redacted
		}
	}
	return knownToken.ReplaceAllString(v, Redacted)
}

func redactArgs(args []string) []string {
	if len(args) == 0 {
		return nil
	}
	out := make([]string, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			name, _, hasValue := strings.Cut(a, "=")
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

// redactURL hides userinfo and secret-looking query and fragment values.
// A URL that does not parse is hidden whole if it could carry a secret.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if strings.ContainsAny(raw, "@?#") {
			return Redacted
		}
		return knownToken.ReplaceAllString(raw, Redacted)
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
					vs[i] = knownToken.ReplaceAllString(v, urlRedacted)
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
	u.Path = knownToken.ReplaceAllString(u.Path, urlRedacted)
	u.RawPath = ""
	return u.String()
}

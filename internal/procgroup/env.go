package procgroup

import (
	"slices"
	"strings"

	"github.com/evokore/evokore/internal/config"
)

// baseEnv is the base allowlist: the variables every started process
// gets from the router's environment. Enough to find programs, a home, a
// locale, a temp dir, a terminal type and a proxy, and nothing that
// belongs to another server.
var baseEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE",
	"TMPDIR", "TMP", "TEMP", "TZ", "TERM", "NODE_ENV",
	"XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
	"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
	// Windows needs these to start anything at all.
	"SYSTEMROOT", "SystemRoot", "COMSPEC", "PATHEXT", "WINDIR", "APPDATA", "LOCALAPPDATA",
	"USERPROFILE", "PROGRAMFILES", "ProgramFiles", "ProgramData", "PROGRAMDATA",
}

// toolchainEnv are the variables build and test tools read to find their
// caches, modules and compilers; commands that build (workers, fleet
// agents) get them on top of the base allowlist.
var toolchainEnv = []string{
	"GOROOT", "GOPATH", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY", "GOPRIVATE",
	"GONOSUMDB", "GONOPROXY", "GOSUMDB", "CGO_ENABLED", "CC", "CXX",
	"CARGO_HOME", "RUSTUP_HOME", "JAVA_HOME", "VIRTUAL_ENV", "NVM_DIR",
	"NPM_CONFIG_CACHE", "npm_config_cache", "CI",
}

// BaseEnv returns the names of the base allowlist, for documentation and
// for callers that must refuse to let a model override one of them.
func BaseEnv() []string { return slices.Clone(baseEnv) }

// Env is the environment policy of one started process: the base
// allowlist of Parent, or all of Parent when Inherit is set, with Set
// applied last.
type Env struct {
	// Parent is the router's environment as it sees it (.env included).
	Parent config.Env
	// Inherit passes the whole of Parent: only where the configuration
	// asks for it (a server's inheritEnv).
	Inherit bool
	// Toolchain adds the build and test tools' variables to the base
	// allowlist.
	Toolchain bool
	// Set are the process's own variables; they win.
	Set map[string]string
}

// List renders the policy as sorted KEY=VALUE pairs for exec.
func (e Env) List() []string {
	vars := map[string]string{}
	if e.Inherit {
		for _, kv := range e.Parent.Pairs() {
			k, v, _ := strings.Cut(kv, "=")
			vars[k] = v
		}
	} else {
		names := baseEnv
		if e.Toolchain {
			names = append(slices.Clone(baseEnv), toolchainEnv...)
		}
		for _, k := range names {
			if v, ok := e.Parent.Lookup(k); ok {
				vars[k] = v
			}
		}
	}
	for k, v := range e.Set {
		vars[k] = v
	}
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

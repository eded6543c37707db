package connect

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"

	"github.com/evokore/evokore/internal/jsonenc"
)

// Name is the entry connect writes into a client.
const Name = "evokore"

// stdioEntry is the evokore entry in a client's file.
type stdioEntry struct {
	Type    string            `json:"type,omitempty" toml:"type,omitempty"`
	Command string            `json:"command" toml:"command"`
	Args    []string          `json:"args" toml:"args"`
	Env     map[string]string `json:"env,omitempty" toml:"env,inline,omitempty"`
	// EnvVars is Codex's list of variables passed from its environment.
	EnvVars []string `json:"-" toml:"env_vars,omitempty"`
}

// Target is what the evokore entry runs.
type Target struct {
	// Exe is this evokore's absolute path; Config the absolute path of
	// the mcp.config.json it serves.
	Exe, Config string
	// Home, when set, is passed as EVOKORE_HOME: the user chose a home
	// other than the default, and the client would not know it.
	Home string
	// Portable is set for a project's file, which is committed and used
	// on teammates' machines: the entry names no path of this one. It
	// runs `evokore serve` from PATH, which reads ./mcp.config.json in
	// the directory the client starts it in (the project's, trust
	// rules included), so Config must be that file.
	Portable bool
}

// entry is evokore's entry for client c; pass names the variables the
// servers of its config refer to, which a client that starts evokore
// with only part of its environment is told to pass (Client.passEnv).
func (c Client) entry(t Target, pass []string) stdioEntry {
	e := stdioEntry{Command: t.Exe, Args: []string{"serve", "--config", t.Config}}
	if t.Portable {
		e = stdioEntry{Command: Name, Args: []string{"serve"}}
	}
	if c.Typed {
		e.Type = "stdio"
	}
	if t.Home != "" && !t.Portable {
		e.Env = map[string]string{"EVOKORE_HOME": t.Home}
	}
	if c.passEnv != nil && len(pass) > 0 {
		c.passEnv(&e, pass)
	}
	return e
}

// codexPassEnv lists the variables in the entry's env_vars: Codex starts
// a server with a few variables of its own environment (HOME, PATH…)
// and these.
func codexPassEnv(e *stdioEntry, names []string) { e.EnvVars = names }

// geminiPassEnv passes each variable by the entry's env, as ${NAME},
// which Gemini CLI expands: it starts a server without the variables
// whose names look secret (*TOKEN*, *KEY*…) unless the entry names them.
func geminiPassEnv(e *stdioEntry, names []string) {
	if e.Env == nil {
		e.Env = map[string]string{}
	}
	for _, n := range names {
		if _, set := e.Env[n]; !set {
			e.Env[n] = "${" + n + "}"
		}
	}
}

// compactJSON encodes v without HTML escaping, so paths read as written.
func compactJSON(v any) []byte {
	b, _ := jsonenc.Marshal(v)
	return b
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

var validID = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// commandOf reads command and args from a JSON entry.
func commandOf(raw []byte) (string, []string) {
	var e struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	_ = json.Unmarshal(blankJSONC(raw), &e)
	return e.Command, e.Args
}

// StartsEvokore reports why a server entry would start evokore itself:
// its command is this executable (found through PATH, or relative to
// dir, symlinks followed) or is named evokore, or one of its arguments
// names evokore (npx evokore, go run ./cmd/evokore). Such an entry
// under evokore would start evokore again, without end.
func StartsEvokore(command string, args []string, dir string) (string, bool) {
	if command == "" {
		return "", false
	}
	if isEvokoreName(command) {
		return fmt.Sprintf("its command '%s' is evokore", filepath.Base(command)), true
	}
	if self := selfExe(); self != nil {
		path := command
		if !strings.ContainsAny(path, `/\`) {
			path, _ = exec.LookPath(command)
		} else if !filepath.IsAbs(path) && dir != "" {
			path = filepath.Join(dir, path)
		}
		if fi, err := os.Stat(path); err == nil && os.SameFile(fi, self) {
			return fmt.Sprintf("its command '%s' is this evokore", command), true
		}
	}
	for _, a := range args {
		if isEvokoreName(strings.SplitN(a, "@", 2)[0]) {
			return fmt.Sprintf("it runs '%s'", a), true
		}
	}
	return "", false
}

func isEvokoreName(p string) bool {
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(p, `\`, "/")))
	return strings.TrimSuffix(base, ".exe") == Name
}

func selfExe() os.FileInfo {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return nil
	}
	return fi
}

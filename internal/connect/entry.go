package connect

import (
	"bytes"
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

// stdioEntry is the evokore entry in a client's JSON file.
type stdioEntry struct {
	Type    string            `json:"type,omitempty" toml:"type,omitempty"`
	Command string            `json:"command" toml:"command"`
	Args    []string          `json:"args" toml:"args"`
	Env     map[string]string `json:"env,omitempty" toml:"env,inline,omitempty"`
}

// Target is what the evokore entry runs.
type Target struct {
	// Exe is this evokore's absolute path; Config the absolute path of
	// the mcp.config.json it serves.
	Exe, Config string
	// Home, when set, is passed as EVOKORE_HOME: the user chose a home
	// other than the default, and the client would not know it.
	Home string
}

func (c Client) entry(t Target) stdioEntry {
	e := stdioEntry{Command: t.Exe, Args: []string{"serve", "--config", t.Config}}
	if c.Typed {
		e.Type = "stdio"
	}
	if t.Home != "" {
		e.Env = map[string]string{"EVOKORE_HOME": t.Home}
	}
	return e
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

// evokoreKeys are the keys of a server entry evokore's config accepts;
// a client's entry that uses only these moves over as written.
var evokoreKeys = map[string]bool{
	"transport": true, "type": true, "command": true, "args": true, "env": true, "cwd": true,
	"inheritEnv": true, "url": true, "headers": true, "disabled": true, "description": true,
	"timeouts": true, "rateLimit": true, "cooldownMs": true, "pinning": true, "pinNewTools": true, "prefix": true,
}

var validID = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// convertJSON turns a client's JSON entry into an evokore server entry
// (compact JSON), keeping every value as written. Keys other clients
// spell differently are renamed; a key with no equivalent refuses the
// entry, so nothing the user configured is dropped without a word.
func convertJSON(c Client, raw []byte) ([]byte, error) {
	d, err := parseJSONDoc(raw)
	if err != nil {
		return nil, err
	}
	o, err := d.root()
	if err != nil {
		return nil, fmt.Errorf("the entry is not an object")
	}
	out := &jsonDoc{data: []byte("{}"), plain: []byte("{}")}
	put := func(k string, v []byte) {
		r, _ := out.root()
		out.add(r, k, compactValue(v), false)
	}
	typed := false
	for _, m := range o.members {
		if m.name == "type" || m.name == "transport" {
			typed = true
		}
	}
	for _, m := range o.members {
		v := d.plain[m.valStart:m.valEnd]
		switch {
		case evokoreKeys[m.name] || strings.HasPrefix(m.name, "x-"):
			put(m.name, v)
		case m.name == "httpUrl" || m.name == "serverUrl":
			// Gemini's and Windsurf's streamable HTTP address.
			put("url", v)
			if !typed {
				put("type", []byte(`"http"`))
				typed = true
			}
		case m.name == "timeout" && c.Name == "gemini":
			put("timeouts", []byte(`{"requestMs":`+string(compactValue(v))+`}`))
		default:
			return nil, fmt.Errorf("its key '%s' has no equivalent in evokore's config", m.name)
		}
	}
	// Gemini's "url" is the older SSE transport.
	if c.Name == "gemini" && !typed {
		if _, ok := o.find("url"); ok {
			put("type", []byte(`"sse"`))
		}
	}
	return out.data, nil
}

func compactValue(v []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return v
	}
	return b.Bytes()
}

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

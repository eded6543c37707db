// Package handoff lets a small front process answer a stdio client's
// initialize and then become the router (execve, same process, same
// stdin and stdout), so the handshake does not wait for the router's
// start: package initialisation of CUE, the JSON Schema compiler and the
// go-sdk alone takes tens of milliseconds before main runs, and a
// process that links them cannot answer sooner (docs/decisions.md,
// Startup). The front is command evokore-mcp; it links only this
// package, package rawjson (which reads JSON in place) and the standard
// library.
//
// The answer is not computed here. It is the go-sdk's own, rendered for
// every protocol version the SDK supports into answers_gen.go by the
// code generator (gen, through package handshake), with the request's
// id and the build's version put in at run time. Answer takes only the
// requests whose answer it can give byte for byte as the SDK would; any
// other first frame is left to the router, which then answers as before.
//
// What the front read from stdin (the prelude: the first line, maybe
// more) and the answer it wrote travel to the router in one environment
// variable (Env). The router takes it out of its environment before it
// starts a child (Take), reads the prelude before stdin, and drops its
// own answer to the initialize the front answered, checking the two are
// the same bytes.
package handoff

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"strings"

	"github.com/evokore/evokore/internal/rawjson"
)

// Env is the environment variable that carries the hand-off from the
// front to the router.
const Env = "EVOKORE_HANDOFF"

// format tags the variable's layout: format.prelude.answer, both
// base64url without padding (no '.' in that alphabet).
const format = "1"

// MaxPrelude bounds what the front reads before it hands off; with
// base64 it stays below Linux's 128 KiB limit on one environment string.
const MaxPrelude = 64 << 10

// Encode is the value of Env for a prelude read and an answer written
// (nil if none was).
func Encode(prelude, answer []byte) string {
	enc := base64.RawURLEncoding
	return format + "." + enc.EncodeToString(prelude) + "." + enc.EncodeToString(answer)
}

// Take removes Env from the process's environment and returns what it
// carried: the bytes the front read from stdin, and its answer to the
// first of them (nil if it gave none). handed is false when the variable
// was not set; an error means it was set but is not a hand-off (nothing
// is taken from it then).
func Take() (prelude, answer []byte, handed bool, err error) {
	v, ok := os.LookupEnv(Env)
	if !ok {
		return nil, nil, false, nil
	}
	os.Unsetenv(Env)
	prelude, answer, err = decode(v)
	if err != nil {
		return nil, nil, false, err
	}
	return prelude, answer, true, nil
}

func decode(v string) (prelude, answer []byte, err error) {
	parts := strings.Split(v, ".")
	if len(parts) != 3 || parts[0] != format {
		return nil, nil, errors.New(Env + " is not a hand-off from evokore-mcp of this version")
	}
	enc := base64.RawURLEncoding
	if prelude, err = enc.DecodeString(parts[1]); err == nil {
		answer, err = enc.DecodeString(parts[2])
	}
	if err != nil || len(prelude) > MaxPrelude {
		return nil, nil, errors.New(Env + " is malformed")
	}
	if len(answer) == 0 {
		answer = nil
	}
	return prelude, answer, nil
}

// Placeholders in answers_gen.go's templates; JSON text cannot hold a raw
// NUL, so they cannot clash with the answer's own bytes.
const (
	// IDMark stands for the request's id, as its JSON text.
	IDMark = "\x00id\x00"
	// VersionMark stands for the build's version, a JSON string's body.
	VersionMark = "\x00version\x00"
)

// Answer returns the router's answer to frame, one line without its
// newline, when frame is an initialize request it can answer exactly as
// the go-sdk would, and nil otherwise. version is the build's version,
// the answer's serverInfo.version.
//
// It takes a request only in the shape the SDK surely accepts and
// re-encodes to the same bytes: exactly the members jsonrpc "2.0", id,
// method "initialize" and params, each once; an integer id of at most 15
// digits or a string id of printable ASCII that needs no escaping;
// params with a string protocolVersion, an object of objects as
// capabilities, a clientInfo object whose name is a string, and at most
// a _meta object besides.
func Answer(frame []byte, version string) []byte {
	if !plain(version, false) {
		return nil
	}
	id, params, ok := initializeRequest(frame)
	if !ok {
		return nil
	}
	requested, ok := protocolVersion(params)
	if !ok {
		return nil
	}
	t, ok := answers[requested]
	if !ok {
		t = otherVersion
	}
	out := strings.Replace(t, IDMark, string(id), 1)
	return []byte(strings.Replace(out, VersionMark, version, 1))
}

// initializeRequest returns the id and params of frame if it is an
// initialize request in the shape Answer takes.
func initializeRequest(frame []byte) (id, params json.RawMessage, ok bool) {
	members, ok := object(frame)
	if !ok || len(members) != 4 {
		return nil, nil, false
	}
	var jsonrpc, method string
	if !text(members["jsonrpc"], &jsonrpc) || jsonrpc != "2.0" ||
		!text(members["method"], &method) || method != "initialize" {
		return nil, nil, false
	}
	id, params = members["id"], members["params"]
	if !plainID(id) || params == nil {
		return nil, nil, false
	}
	return id, params, true
}

// protocolVersion returns the version params asks for if params is in
// the shape Answer takes.
func protocolVersion(params json.RawMessage) (string, bool) {
	members, ok := object(params)
	if !ok {
		return "", false
	}
	var requested string
	if !text(members["protocolVersion"], &requested) {
		return "", false
	}
	caps, ok := object(members["capabilities"])
	if !ok {
		return "", false
	}
	for _, c := range caps {
		if _, ok := object(c); !ok {
			return "", false
		}
	}
	info, ok := object(members["clientInfo"])
	var name string
	if !ok || !text(info["name"], &name) {
		return "", false
	}
	known := 3
	if meta, present := members["_meta"]; present {
		if _, ok := object(meta); !ok {
			return "", false
		}
		known++
	}
	return requested, len(members) == known
}

// object returns the members' raw values of data, one valid JSON object
// (nothing after it), refusing a member named twice.
func object(data []byte) (map[string]json.RawMessage, bool) {
	if data == nil || !json.Valid(data) {
		return nil, false
	}
	members := map[string]json.RawMessage{}
	dup := false
	err := rawjson.Members(data, func(name string, value []byte) bool {
		if _, dup = members[name]; !dup {
			members[name] = value
		}
		return !dup
	})
	return members, err == nil && !dup
}

// text reads data as a JSON string into s.
func text(data json.RawMessage, s *string) bool {
	v, ok := rawjson.String(data)
	*s = v
	return ok
}

// plainID reports whether id is an integer of at most 15 digits without
// leading zeros (the SDK reads ids as float64: 16 digits may not survive), or a string plain enough to be its own encoding.
func plainID(id json.RawMessage) bool {
	s := string(id)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return plain(s[1:len(s)-1], true)
	}
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || len(digits) > 15 || (digits[0] == '0' && (len(digits) > 1 || s != "0")) {
		return false
	}
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// plain reports whether s encodes as a JSON string body unchanged by any
// encoder: printable ASCII without quote, backslash or the characters
// HTML-safe encoders escape. A version is held to less: letters, digits
// and ".+-_".
func plain(s string, anyPrintable bool) bool {
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '+', c == '-', c == '_':
		case !anyPrintable:
			return false
		case c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&':
			return false
		}
	}
	return true
}

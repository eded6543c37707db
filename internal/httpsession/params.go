package httpsession

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/evokore/evokore/internal/httpfront"
	"github.com/evokore/evokore/internal/rawjson"
)

// Mcp-Param-* headers (MCP 2026-07-28, SEP-2243).
//
// A tool may mark arguments with "x-mcp-header": "<Name>" in its input
// schema; a client of the new protocol then mirrors each such argument
// into an `Mcp-Param-<Name>` header, so that a gateway or load balancer can
// route on it without reading the body. The router answers tools/call
// itself (the go-sdk's own check only knows tools in its registry, which
// holds none of the router's), so it checks them here, against the
// schema its listings show for the name called: a proxied tool's is the
// child's, annotations included, so what a client mirrors for it is what
// the router checks. A tool the client's tools/list does not show (one it
// must discover, or every tool while listings defer schemas) is called
// by a client that may not know its annotations: a header it sends is
// checked all the same, one it leaves out is not required. The go-sdk client that calls the child then mirrors
// the same arguments into the child's request from the child's own
// listing. A header that disagrees with the body, is missing while the
// body has the value, or is present while the body has none, is refused
// with 400 and HeaderMismatch (-32020) before anything runs: a proxy in
// front that routed on the header and a router that runs the body would
// otherwise act on different values.

const (
	paramHeaderPrefix = "Mcp-Param-"
	// codeHeaderMismatch is the JSON-RPC code of a header that does not
	// match the body.
	codeHeaderMismatch = -32020
	base64Open         = "=?base64?"
	base64Close        = "?="
	// maxSafeInteger bounds the integers a header may carry (JavaScript's
	// safe range).
	maxSafeInteger = 1<<53 - 1
)

// paramBinding is one annotated argument: its path of property names from
// the schema's root, and the header that mirrors it.
type paramBinding struct {
	path   []string
	header string
}

// paramBindings are the x-mcp-header annotations of schema, reached
// through "properties" alone, as the spec allows.
func paramBindings(schema any) []paramBinding {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	type prop struct {
		Header     json.RawMessage `json:"x-mcp-header"`
		Properties map[string]json.RawMessage
	}
	var out []paramBinding
	var walk func(props map[string]json.RawMessage, prefix []string, depth int)
	walk = func(props map[string]json.RawMessage, prefix []string, depth int) {
		if depth > 32 {
			return
		}
		for name, rawProp := range props {
			var p prop
			if json.Unmarshal(rawProp, &p) != nil {
				continue
			}
			path := append(append([]string(nil), prefix...), name)
			var header string
			if json.Unmarshal(p.Header, &header) == nil && header != "" {
				out = append(out, paramBinding{path: path, header: header})
			}
			walk(p.Properties, path, depth+1)
		}
	}
	var root prop
	if json.Unmarshal(raw, &root) != nil {
		return nil
	}
	walk(root.Properties, nil, 0)
	return out
}

// rpcCall is what the check reads of a JSON-RPC message.
type rpcCall struct {
	ID     json.RawMessage
	Method string
	Name   string
	// Arguments are decoded only for a tool that annotates them.
	Arguments json.RawMessage
}

// readCall reads msg in place as the SDK's decoder reads a request:
// member names match exactly and the last of a repeated member counts.
// A member of the wrong type reports false, where decoding would fail.
func readCall(msg []byte) (rpcCall, bool) {
	var c rpcCall
	var params []byte
	ok := true
	str := func(v []byte, into *string) bool {
		if string(v) == "null" {
			*into = ""
			return true
		}
		*into, ok = rawjson.String(v)
		return ok
	}
	if rawjson.Members(msg, func(k string, v []byte) bool {
		switch k {
		case "id":
			c.ID = v
		case "method":
			return str(v, &c.Method)
		case "params":
			params = v
		}
		return true
	}) != nil || !ok {
		return c, false
	}
	if params == nil || string(params) == "null" {
		return c, true
	}
	if rawjson.Members(params, func(k string, v []byte) bool {
		switch k {
		case "name":
			return str(v, &c.Name)
		case "arguments":
			c.Arguments = v
		}
		return true
	}) != nil || !ok {
		return c, false
	}
	return c, true
}

// checkParamHeaders checks the Mcp-Param-* headers of a POST of the
// 2026-07-28 protocol whose body is a tools/call (or a batch holding
// some), against the schema schemaOf gives for the tool called. It
// returns the id of the request that failed and what is wrong, or "".
// A body that is not JSON, or not requests, is not checked: the SDK
// refuses it.
func checkParamHeaders(header http.Header, body []byte, schemaOf func(name string) (any, bool, bool)) (json.RawMessage, string) {
	if !json.Valid(body) {
		return nil, ""
	}
	var calls []rpcCall
	read := func(msg []byte) bool {
		c, ok := readCall(msg)
		calls = append(calls, c)
		return ok
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		ok := true
		if rawjson.Elements(trimmed, func(v []byte) bool { ok = read(v); return ok }) != nil || !ok {
			return nil, ""
		}
	} else if !read(trimmed) {
		return nil, ""
	}
	for _, c := range calls {
		if c.Method != "tools/call" {
			continue
		}
		schema, listed, ok := schemaOf(c.Name)
		if !ok || schema == nil {
			// An unknown tool (its call is refused as such), or one
			// whose schema annotates nothing.
			continue
		}
		bindings := paramBindings(schema)
		if len(bindings) == 0 {
			continue
		}
		var args map[string]json.RawMessage
		_ = json.Unmarshal(c.Arguments, &args) // not an object: every argument is absent
		for _, b := range bindings {
			if problem := checkParam(header, b, args, listed); problem != "" {
				return c.ID, problem
			}
		}
	}
	return nil, ""
}

// checkParam checks one annotated argument against its header, which
// must be sent when required and the argument is.
func checkParam(header http.Header, b paramBinding, args map[string]json.RawMessage, required bool) string {
	name := paramHeaderPrefix + b.header
	values := header.Values(name)
	arg, present := argumentAt(args, b.path)
	where := strings.Join(b.path, ".")
	if !present {
		if len(values) > 0 {
			return fmt.Sprintf("Header mismatch: %s is sent but argument '%s' is absent or null", name, where)
		}
		return ""
	}
	if len(values) == 0 {
		if !required {
			return ""
		}
		return fmt.Sprintf("Header mismatch: argument '%s' is set but the %s header is missing", where, name)
	}
	if len(values) > 1 {
		return fmt.Sprintf("Header mismatch: %s is sent %d times", name, len(values))
	}
	got, ok := decodeParam(values[0])
	if !ok {
		return fmt.Sprintf("Header mismatch: %s is not a valid header value", name)
	}
	if !paramMatches(got, arg) {
		return fmt.Sprintf("Header mismatch: %s does not match argument '%s'", name, where)
	}
	return ""
}

// argumentAt is the value at path in args; absent and null are the same.
func argumentAt(args map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	cur := args
	for i, key := range path {
		v, ok := cur[key]
		if !ok || string(bytes.TrimSpace(v)) == "null" {
			return nil, false
		}
		if i == len(path)-1 {
			return v, true
		}
		cur = nil
		if json.Unmarshal(v, &cur) != nil {
			return nil, false
		}
	}
	return nil, false
}

// decodeParam is a header's value, its base64 sentinel form decoded; a
// plain value must be visible ASCII without surrounding blanks.
func decodeParam(v string) (string, bool) {
	if inner, ok := strings.CutPrefix(v, base64Open); ok {
		if inner, ok = strings.CutSuffix(inner, base64Close); ok {
			b, err := base64.StdEncoding.DecodeString(inner)
			return string(b), err == nil
		}
	}
	if v != strings.Trim(v, " \t") {
		return "", false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return "", false
		}
	}
	return v, true
}

// paramMatches reports whether the decoded header h carries the argument
// arg: a string byte for byte, a boolean as true/false, an integer (in
// the safe range) by value, so "42.0" carries 42. Other JSON (numbers
// with fractions, objects, arrays) cannot be carried by a header.
func paramMatches(h string, arg json.RawMessage) bool {
	var v any
	if json.Unmarshal(arg, &v) != nil {
		return false
	}
	switch v := v.(type) {
	case string:
		return h == v
	case bool:
		return h == strconv.FormatBool(v)
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > maxSafeInteger {
			return false
		}
		// JSON's number syntax: no hex, no NaN, no leading '+'.
		var n float64
		return json.Unmarshal([]byte(h), &n) == nil && n == v
	}
	return false
}

// decodeName decodes an Mcp-Name sent in the base64 sentinel form (a
// name or URI that is not plain ASCII), which the go-sdk's check would
// otherwise compare to the body still encoded; the SDK then compares the
// decoded name. It returns what is wrong with one that does not decode.
func decodeName(r *http.Request) (*http.Request, string) {
	v := r.Header.Get("Mcp-Name")
	if !strings.HasPrefix(v, base64Open) || !strings.HasSuffix(v, base64Close) {
		return r, ""
	}
	name, ok := decodeParam(v)
	if !ok {
		return nil, "Header mismatch: Mcp-Name is not valid base64"
	}
	// The request the server gave stays as it came.
	r = r.Clone(r.Context())
	r.Header.Set("Mcp-Name", name)
	return r, ""
}

// taskMethods carry the id of their task in Mcp-Name (the tasks
// extension, SEP-2663), so that a balancer can route them to the replica
// that holds it; the router checks it, as the go-sdk checks the names of
// the methods it knows.
var taskMethods = map[string]bool{"tasks/get": true, "tasks/update": true, "tasks/cancel": true}

// checkTaskName checks the Mcp-Name of a tasks request against its
// taskId: it must be sent and equal. It returns the request's id and
// what is wrong, or "".
func checkTaskName(header http.Header, body []byte) (json.RawMessage, string) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			TaskID json.RawMessage `json:"taskId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || !taskMethods[msg.Method] {
		return nil, ""
	}
	name := header.Get("Mcp-Name")
	if name == "" {
		return msg.ID, fmt.Sprintf("Header mismatch: missing required Mcp-Name header for method %q", msg.Method)
	}
	if id, ok := rawjson.String(msg.Params.TaskID); !ok || id != name {
		return msg.ID, fmt.Sprintf("Header mismatch: Mcp-Name header value '%s' does not match the body's taskId", name)
	}
	return nil, ""
}

// checkHeaders refuses a POST of the 2026-07-28 protocol whose Mcp-Param-*
// headers do not match its body (400, HeaderMismatch), and otherwise
// returns it. Mcp-Method and Mcp-Name are the
// go-sdk handler's to check; it sees every request after this, with an
// encoded Mcp-Name decoded.
func (h *Handler) checkHeaders(w http.ResponseWriter, r *http.Request, body []byte) (*http.Request, bool) {
	id, problem := checkParamHeaders(r.Header, body, h.rt.InputSchema)
	if problem == "" {
		if r, problem = decodeName(r); problem == "" {
			if id, problem = checkTaskName(r.Header, body); problem == "" {
				return r, true
			}
		}
	}
	httpfront.WriteRPCErrorID(w, http.StatusBadRequest, id, codeHeaderMismatch, problem, nil)
	return nil, false
}

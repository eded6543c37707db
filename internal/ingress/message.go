package ingress

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/evokore/evokore/internal/rawjson"
)

// Message is a message whose envelope is already checked (as Check
// would), its parts still the bytes the client sent.
type Message struct {
	// ID is the raw id: a JSON string or an integer; nil for a
	// notification.
	ID []byte
	// Method is the method name.
	Method string
	// Params is the raw params object; nil when absent.
	Params []byte
}

// Methods the byte path is offered.
const (
	MethodCall   = "tools/call"
	MethodCancel = "notifications/cancelled"
)

// Scan reads the envelope of a JSON-RPC message in place and returns it
// when it is a clean tools/call request or notifications/cancelled
// notification, the two messages a byte path is offered. Anything less
// than clean (a duplicate member, an id out of range, bad UTF-8, too
// deep, a tools/call without an id, a cancellation with one) returns
// false, and the message goes on to the SDK path, where Check answers it
// as it always does.
func Scan(msg []byte) (Message, bool) {
	var m Message
	if firstByte(msg) != '{' || !json.Valid(msg) || !utf8.Valid(msg) {
		return m, false
	}
	var version, method []byte
	seen := 0
	clean := true
	err := rawjson.Members(msg, func(name string, v []byte) bool {
		bit := 0
		switch name {
		case "jsonrpc":
			bit, version = 1, v
		case "id":
			bit, m.ID = 2, v
		case "method":
			bit, method = 4, v
		case "params":
			bit, m.Params = 8, v
		default:
			clean = false // result, error or something unknown
			return false
		}
		if seen&bit != 0 {
			clean = false
			return false
		}
		seen |= bit
		return true
	})
	if err != nil || !clean || string(version) != `"2.0"` || method == nil {
		return m, false
	}
	if m.Method, clean = offered(method); !clean {
		return m, false
	}
	// A tools/call is a request and a cancellation a notification; the
	// other way round is the SDK's to refuse.
	if (m.ID != nil) != (m.Method == MethodCall) || m.ID != nil && checkID(m.ID) != nil {
		return m, false
	}
	if m.Params != nil && firstByte(m.Params) != '{' {
		return m, false
	}
	return m, depth(msg) <= MaxDepth
}

// offered is the method a byte path is offered that raw names, or false.
func offered(raw []byte) (string, bool) {
	name, ok := rawjson.String(raw)
	if !ok || name != MethodCall && name != MethodCancel {
		return "", false
	}
	return name, true
}

// IDKey is the key of a request id in a set of open requests: what the
// go-sdk's jsonrpc.ID.Raw() gives for the same id, so that a transport's
// byte path and its SDK path share one set ("a" and "\u0061" are one
// id).
func IDKey(id []byte) any {
	if s, ok := rawjson.String(id); ok {
		return s
	}
	n, _ := strconv.ParseInt(string(bytes.TrimSpace(id)), 10, 64)
	return n
}

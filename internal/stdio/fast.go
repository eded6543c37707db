package stdio

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"sync/atomic"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/rawjson"
)

// FastPath takes some requests off the connection before the go-sdk sees
// them: the router's proxied tools/call and the cancellations of those
// calls. Take is offered every clean tools/call and
// notifications/cancelled, in reading order, on the reading goroutine,
// and must not block. It returns ok false to leave the message to the
// SDK. A call it takes comes back as run, answered through the Replier:
// the transport hands reading on to another goroutine and runs it on the
// one that read it, so the call starts at once while a thread wakes to
// read the next message off its critical path. run is nil for a message
// Take handled itself.
type FastPath interface {
	Take(m Message, r Replier) (run func(), ok bool)
}

// goroutines runs functions on goroutines that outlive them. A proxied
// call grows its goroutine's stack past the runtime's starting size
// (router stages, schema validation, the records), so a new goroutine per
// call would copy its stack two or three times each call; one that waits
// for the next task keeps what it grew until a collection finds it idle
// and shrinks it. At most maxIdle wait, the rest end.
type goroutines struct {
	tasks chan func()
	idle  atomic.Int32
}

const maxIdleGoroutines = 16

// readers are where reading goes on after a call was taken.
var readers = &goroutines{tasks: make(chan func())}

func (g *goroutines) run(f func()) {
	select {
	case g.tasks <- f: // a waiting goroutine took it
	default:
		go g.loop(f)
	}
}

func (g *goroutines) loop(f func()) {
	for {
		f()
		if g.idle.Add(1) > maxIdleGoroutines {
			g.idle.Add(-1)
			return
		}
		f = <-g.tasks
		g.idle.Add(-1)
	}
}

// Message is a frame whose envelope is already checked (as Decode would),
// its parts still the frame's bytes.
type Message struct {
	// ID is the raw id: a JSON string or an integer; nil for a
	// notification.
	ID []byte
	// Method is the method name.
	Method string
	// Params is the raw params object; nil when absent.
	Params []byte
}

// Replier answers a request a FastPath took. Either method may be called
// once per request, from any goroutine.
type Replier interface {
	// Reply answers with result, written as it is.
	Reply(id, result []byte) error
	// ReplyError answers with a JSON-RPC error; data may be nil.
	ReplyError(id []byte, code int64, message string, data []byte) error
}

// SetFastPath installs fp; nil removes it. It may be called at any time:
// frames read from then on are offered to it.
func (t *Transport) SetFastPath(fp FastPath) {
	if fp == nil {
		t.fast.Store(nil)
		return
	}
	t.fast.Store(&fp)
}

// ScanRequest reads the envelope of a JSON-RPC message in place and
// returns it when it is a clean tools/call request or
// notifications/cancelled notification. Anything less than clean (a
// duplicate member, an id out of range, bad UTF-8, too deep, a
// tools/call without an id, a cancellation with one) returns false, and
// Decode then answers it as it always does. Streamable HTTP reads its
// POST bodies with it too: the message is the same whatever carries it.
func ScanRequest(frame []byte) (Message, bool) {
	var m Message
	if firstByte(frame) != '{' || !json.Valid(frame) || !utf8.Valid(frame) {
		return m, false
	}
	var version []byte
	var method []byte
	seen := 0
	clean := true
	err := rawjson.Members(frame, func(name string, v []byte) bool {
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
	name, ok := rawjson.String(method)
	if !ok {
		return m, false
	}
	switch name {
	case "tools/call", "notifications/cancelled":
	default:
		return m, false
	}
	m.Method = name
	// A tools/call is a request and a cancellation a notification; the
	// other way round is the SDK's to refuse.
	if (m.ID != nil) != (name == "tools/call") || m.ID != nil && checkID(m.ID) != nil {
		return m, false
	}
	if m.Params != nil && firstByte(m.Params) != '{' {
		return m, false
	}
	if depth(frame) > MaxDepth {
		return m, false
	}
	return m, true
}

// idKey is the key of an id in the open-request set: what the SDK's
// jsonrpc.ID.Raw() gives for the same id, so both paths share the set.
func idKey(id []byte) any {
	if s, ok := rawjson.String(id); ok {
		return s
	}
	n, _ := strconv.ParseInt(string(bytes.TrimSpace(id)), 10, 64)
	return n
}

// Reply answers a request a FastPath took.
func (c *Conn) Reply(id, result []byte) error { return c.answer(id, ResponseLine(id, result)) }

// ReplyError answers a request a FastPath took with an error.
func (c *Conn) ReplyError(id []byte, code int64, message string, data []byte) error {
	return c.answer(id, ErrorLine(id, code, message, data))
}

// ResponseLine is the JSON-RPC response to id with result, as written.
func ResponseLine(id, result []byte) []byte {
	buf := make([]byte, 0, len(result)+len(id)+40)
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = append(buf, id...)
	buf = append(buf, `,"result":`...)
	buf = append(buf, result...)
	return append(buf, '}')
}

// ErrorLine is the JSON-RPC error response to id; data may be nil.
func ErrorLine(id []byte, code int64, message string, data []byte) []byte {
	buf := make([]byte, 0, len(message)+len(id)+len(data)+80)
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = append(buf, id...)
	buf = append(buf, `,"error":{"code":`...)
	buf = strconv.AppendInt(buf, code, 10)
	buf = append(buf, `,"message":`...)
	buf = rawjson.Quote(buf, message)
	if len(data) > 0 {
		buf = append(buf, `,"data":`...)
		buf = append(buf, data...)
	}
	return append(buf, `}}`...)
}

// answer writes a response line and marks its request answered.
func (c *Conn) answer(id, line []byte) error {
	return c.respond(idKey(id), line)
}

// Answer answers a taken tools/call through r: with raw, the result's
// bytes as the tool sent them, when not nil; else with res encoded, or
// with err as a JSON-RPC error.
func Answer(r Replier, id []byte, res *mcp.CallToolResult, raw []byte, err error) {
	if err != nil {
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			we = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		_ = r.ReplyError(id, we.Code, we.Message, we.Data)
		return
	}
	if raw != nil {
		_ = r.Reply(id, raw)
		return
	}
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	data, merr := json.Marshal(res)
	if merr != nil {
		_ = r.ReplyError(id, jsonrpc.CodeInternalError, "cannot encode the result: "+merr.Error(), nil)
		return
	}
	_ = r.Reply(id, data)
}

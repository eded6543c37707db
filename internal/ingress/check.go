package ingress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// JSON-RPC 2.0 error codes a refused message is answered with.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeInternalError  = -32603
)

// MaxDepth is the deepest nesting of objects and arrays a message may
// have, envelope included. The go-sdk refuses anything deeper when it
// decodes a message, so a transport answers such a message itself
// instead of handing the SDK one it would drop the connection over.
const MaxDepth = 1000

// maxSafeID bounds numeric ids: the go-sdk carries them through a float64,
// so a larger one would come back in the response as a different number.
const maxSafeID = 1<<53 - 1

// Rejection is why a message is refused, and how to answer it.
type Rejection struct {
	// Code is the JSON-RPC error code.
	Code int64
	// ID is the message's id as JSON (a string or an integer) when it
	// could be recovered, else nil, which answers with "id": null.
	ID json.RawMessage
	// Reason says what is wrong, for the client and the log. It never
	// quotes the message.
	Reason string
}

// Answer is the JSON-RPC error response to send for the message, without
// a line ending.
func (r *Rejection) Answer() []byte {
	id := r.ID
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, wireError{Code: r.Code, Message: r.message()}})
	if err != nil { // only a malformed ID could do this; answer without it
		r.ID = nil
		return r.Answer()
	}
	return b
}

type wireError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (r *Rejection) message() string {
	name := "Error"
	switch r.Code {
	case CodeParseError:
		name = "Parse error"
	case CodeInvalidRequest:
		name = "Invalid Request"
	case CodeInternalError:
		name = "Internal error"
	}
	return name + ": " + r.Reason
}

// Decode turns one message into a jsonrpc.Message, or says why it is not
// one. Everything the go-sdk would refuse is refused here first, so that
// the SDK never sees a message that makes it close the connection:
//
//   - not JSON, two values, trailing bytes, invalid UTF-8: -32700;
//   - a batch, a scalar, a bad envelope (jsonrpc not "2.0", an id that is
//     not a string or an integer of at most 2^53-1, a method that is not
//     a string, params that are neither object nor array, a method with a
//     result, a response with neither or both of result and error, a
//     member given twice), nesting over MaxDepth: -32600.
//
// MCP removed JSON-RPC batches in 2025-06-18; the router speaks that
// version and later, so every batch is refused.
func Decode(msg []byte) (jsonrpc.Message, *Rejection) {
	if rej := Check(msg); rej != nil {
		return nil, rej
	}
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		// A safety net: Check should leave nothing for the SDK to refuse.
		env, _ := readEnvelope(msg)
		return nil, &Rejection{Code: CodeInvalidRequest, ID: env.safeID(), Reason: err.Error()}
	}
	return m, nil
}

// Check is Decode without the decoding: it says why msg is not a message,
// or nil. Streamable HTTP runs it on the bodies it hands to the go-sdk's
// handler (the SDK decodes them itself), so that a body is refused over
// HTTP as its line is over stdio.
func Check(msg []byte) *Rejection {
	if !json.Valid(msg) {
		var v json.RawMessage
		err := json.Unmarshal(msg, &v)
		why := "the frame is not valid JSON"
		var se *json.SyntaxError
		if errors.As(err, &se) {
			why = fmt.Sprintf("the frame is not valid JSON: %v (at byte %d)", se, se.Offset)
		}
		return &Rejection{Code: CodeParseError, Reason: why}
	}
	if !utf8.Valid(msg) {
		// encoding/json accepts and replaces invalid UTF-8, so the id can
		// still be read; RFC 8259 requires UTF-8 all the same.
		env, _ := readEnvelope(msg)
		return &Rejection{Code: CodeParseError, ID: env.safeID(),
			Reason: fmt.Sprintf("invalid UTF-8 at byte %d", invalidUTF8At(msg))}
	}
	switch first := firstByte(msg); first {
	case '{':
	case '[':
		return &Rejection{Code: CodeInvalidRequest, Reason: "batches are not supported (MCP 2025-06-18 removed them); send one request per line"}
	default:
		return &Rejection{Code: CodeInvalidRequest, Reason: "a request must be a JSON object"}
	}
	env, err := readEnvelope(msg)
	if err != nil {
		return &Rejection{Code: CodeInvalidRequest, ID: env.safeID(), Reason: err.Error()}
	}
	if d := depth(msg); d > MaxDepth {
		return &Rejection{Code: CodeInvalidRequest, ID: env.safeID(),
			Reason: fmt.Sprintf("nesting depth %d exceeds the limit of %d", d, MaxDepth)}
	}
	return nil
}

// envelope is the top level of a message; values stay raw.
type envelope struct {
	members map[string]json.RawMessage
	// dup is the first member given twice, if any.
	dup string
	// idOK reports that id is a usable id (a string, or an integer within
	// the safe range).
	idOK bool
}

// safeID is the id to answer with, or nil.
func (e envelope) safeID() json.RawMessage {
	if !e.idOK {
		return nil
	}
	return e.members["id"]
}

// readEnvelope reads the top-level members of a JSON object and checks the
// JSON-RPC envelope, in that order. The returned envelope is usable (for
// its id) even when err is not nil.
func readEnvelope(msg []byte) (envelope, error) {
	env, err := readMembers(msg)
	if err != nil {
		return env, err
	}
	idErr := checkID(env.members["id"])
	env.idOK = idErr == nil && env.members["id"] != nil && env.dup != "id"
	return env, env.check(idErr)
}

// readMembers reads the top-level members of a JSON object, the last of a
// repeated one kept (as the SDK keeps it) and the first repeated named.
func readMembers(msg []byte) (envelope, error) {
	env := envelope{members: map[string]json.RawMessage{}}
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return env, errors.New("a request must be a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return env, errors.New("unreadable member name")
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return env, fmt.Errorf("member %q: %v", key, err)
		}
		if _, seen := env.members[key]; seen && env.dup == "" {
			env.dup = key
		}
		env.members[key] = v
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return env, errors.New("unterminated object")
	}
	return env, nil
}

// check checks the envelope's members: none repeated, the version, the
// id (idErr is what checkID said of it), then the shape of a request or
// of a response.
func (e envelope) check(idErr error) error {
	if e.dup != "" {
		return fmt.Errorf("member %q is given twice", e.dup)
	}
	if v := e.members["jsonrpc"]; string(v) != `"2.0"` {
		return errors.New(`"jsonrpc" must be "2.0"`)
	}
	if _, hasID := e.members["id"]; hasID && idErr != nil {
		return idErr
	}
	if method, ok := e.members["method"]; ok {
		return e.checkRequest(method)
	}
	return e.checkResponse()
}

// checkRequest checks a request's (or notification's) members.
func (e envelope) checkRequest(method json.RawMessage) error {
	if firstByte(method) != '"' {
		return errors.New(`"method" must be a string`)
	}
	_, hasResult := e.members["result"]
	_, hasError := e.members["error"]
	if hasResult || hasError {
		return errors.New(`a request cannot carry "result" or "error"`)
	}
	if p, ok := e.members["params"]; ok {
		if b := firstByte(p); b != '{' && b != '[' {
			return errors.New(`"params" must be an object or an array`)
		}
	}
	return nil
}

// checkResponse checks the members of what has no method: a response.
func (e envelope) checkResponse() error {
	_, hasID := e.members["id"]
	_, hasResult := e.members["result"]
	errVal, hasError := e.members["error"]
	switch {
	case !hasID:
		return errors.New(`a request needs a "method"`)
	case hasResult == hasError:
		return errors.New(`a message needs a "method", or exactly one of "result" and "error"`)
	case hasError && firstByte(errVal) != '{':
		return errors.New(`"error" must be an object`)
	}
	return nil
}

// checkID accepts a string or an integer the SDK carries exactly.
func checkID(id json.RawMessage) error {
	if id == nil {
		return nil
	}
	switch b := firstByte(id); {
	case b == '"':
		return nil
	case b == '-' || b >= '0' && b <= '9':
		n, err := strconv.ParseInt(string(id), 10, 64)
		if err != nil || n > maxSafeID || n < -maxSafeID {
			return fmt.Errorf(`"id" must be a string or an integer between -(2^53-1) and 2^53-1`)
		}
		return nil
	}
	return errors.New(`"id" must be a string or an integer`)
}

func firstByte(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// depth is the deepest nesting of objects and arrays in valid JSON.
func depth(b []byte) int {
	d, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			d++
			deepest = max(deepest, d)
		case '}', ']':
			d--
		}
	}
	return deepest
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

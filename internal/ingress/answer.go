package ingress

import (
	"errors"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/era"
	"github.com/evokore/evokore/internal/rawjson"
)

// Replier answers a request a byte path took, in its transport's framing
// (a line, a plain JSON body, an event). Either method may be called once
// per request, from any goroutine.
type Replier interface {
	// Reply answers with result, written as it is.
	Reply(id, result []byte) error
	// ReplyError answers with a JSON-RPC error; data may be nil.
	ReplyError(id []byte, code int64, message string, data []byte) error
}

// Response is the JSON-RPC response to id with result, as written.
func Response(id, result []byte) []byte {
	buf := make([]byte, 0, len(result)+len(id)+40)
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = append(buf, id...)
	buf = append(buf, `,"result":`...)
	buf = append(buf, result...)
	return append(buf, '}')
}

// ErrorResponse is the JSON-RPC error response to id; data may be nil.
func ErrorResponse(id []byte, code int64, message string, data []byte) []byte {
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

// Answer answers the carried call id through r with what its Run
// returned: raw, the result's bytes, when not nil; else res encoded as
// the SDK would encode it; or err as a JSON-RPC error.
func Answer(r Replier, id []byte, res *mcp.CallToolResult, raw []byte, err error) {
	if err == nil && raw == nil {
		var merr error
		if raw, merr = era.ResultBytes(res, false); merr != nil {
			err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "cannot encode the result: " + merr.Error()}
		}
	}
	if err != nil {
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			we = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		_ = r.ReplyError(id, we.Code, we.Message, we.Data)
		return
	}
	_ = r.Reply(id, raw)
}

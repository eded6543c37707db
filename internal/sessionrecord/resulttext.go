package sessionrecord

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/rawjson"
	"github.com/evokore/evokore/internal/router"
)

// maxRawText bounds the raw results ResultText decodes: beyond it the
// records say how big the answer was instead of decoding megabytes.
const maxRawText = 64 << 10

// resultTextKey is ResultText's key in a call's notes.
type resultTextKey struct{ res *mcp.CallToolResult }

// ResultText joins the text blocks of o's result, for the records (the
// audit log, the session replay). A result a child sent as bytes is read
// from them, decoded only here and only when small; what several records
// ask of one call is read once (router.Call.Note).
func ResultText(o router.Outcome) string {
	if o.Result == nil {
		return ""
	}
	c, res := o.Call, o.Result
	return c.Note(resultTextKey{res}, func() any { return resultText(c, res) }).(string)
}

func resultText(c *router.Call, res *mcp.CallToolResult) string {
	if c.Raw != nil && res == c.Raw.Result && c.Raw.Bytes != nil {
		if len(c.Raw.Bytes) > maxRawText {
			return fmt.Sprintf("[%d bytes of result not recorded]", len(c.Raw.Bytes))
		}
		if text, ok := rawText(c.Raw.Bytes); ok {
			return text
		}
		var raw struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		if json.Unmarshal(c.Raw.Bytes, &raw) != nil {
			return ""
		}
		var parts []string
		for _, b := range raw.Content {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	var parts []string
	for _, b := range res.Content {
		if t, ok := b.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// rawText reads the text blocks of a result's bytes in place (the proxy
// checked them: they are valid JSON), as the decoding into a struct
// after it would, for the shape every tool answers with: a content array
// of objects whose type and text are strings. ok is false for anything
// else (a member name in another case, which decoding also matches, a
// repeated one, a null, a type decoding refuses), left to the decoding.
func rawText(result []byte) (text string, ok bool) {
	var content []byte
	ok = true
	if rawjson.RawMembers(result, func(tok, v []byte) bool {
		switch k := rawjson.Name(tok); {
		case string(k) == "content" && content == nil:
			content = v
		case bytes.EqualFold(k, []byte("content")):
			ok = false
		}
		return ok
	}) != nil || !ok || content == nil {
		return "", false
	}
	var parts []string
	if rawjson.Elements(content, func(block []byte) bool {
		var typ, txt []byte
		if rawjson.RawMembers(block, func(tok, v []byte) bool {
			switch k := rawjson.Name(tok); {
			case string(k) == "type" && typ == nil:
				typ = v
			case string(k) == "text" && txt == nil:
				txt = v
			case bytes.EqualFold(k, []byte("type")) || bytes.EqualFold(k, []byte("text")):
				ok = false
			}
			return ok
		}) != nil || !ok {
			ok = false
			return false
		}
		t, tOK := rawString(typ)
		x, xOK := rawString(txt)
		if ok = tOK && xOK; ok && t == "text" {
			parts = append(parts, x)
		}
		return ok
	}) != nil || !ok {
		return "", false
	}
	return strings.Join(parts, "\n"), true
}

// rawString is a block's member as decoding into a string field reads
// it: absent and null are empty. ok is false for another type, and for
// text that is not UTF-8, which decoding would repair byte by byte.
func rawString(v []byte) (string, bool) {
	if v == nil || string(v) == "null" {
		return "", true
	}
	s, ok := rawjson.String(v)
	if !ok {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return s, utf8.ValidString(s)
		}
	}
	return s, true
}

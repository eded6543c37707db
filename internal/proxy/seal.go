package proxy

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/canonjson"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

// A child's requestState goes to a caller of the new era sealed in one
// of the router's (sealState): the child and the call it belongs to, an
// expiry, under an HMAC, so a retry goes back to that child, for that
// call, only (openState).
const (
	// stateTTL is how long a sealed requestState is honoured.
	stateTTL = 10 * time.Minute
	// statePrefix marks a requestState the router sealed.
	statePrefix = "evokore-child."
)

// callBinding is what a sealed state is bound to: the caller, the tool,
// its definition and the canonical arguments.
func callBinding(c *router.Call) (string, error) {
	args := c.Args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	canon, err := canonjson.FromJSON(args, "")
	if err != nil {
		return "", err
	}
	sess := ""
	if c.Session != nil {
		sess = c.Session.ID
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", sess, c.Entry.Name, c.Entry.Hash)
	h.Write(canon)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)), nil
}

type sealed struct {
	Server  string `json:"s"`
	Binding string `json:"b"`
	Expires int64  `json:"x"`
	Inner   string `json:"r,omitempty"`
}

// SetStateKey sets the key requestStates are sealed with; replicas that
// share approvals share it, so a retry may reach any of them.
func (s *Supervisor) SetStateKey(key []byte) {
	if len(key) > 0 {
		k := append([]byte(nil), key...)
		s.stateKey.Store(&k)
	}
}

func (s *Supervisor) mac(payload string) string {
	m := hmac.New(sha256.New, *s.stateKey.Load())
	m.Write([]byte("evokore child requestState\x00" + payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// sealState wraps a child's requestState in one of the router's: the
// child and the call it belongs to, an expiry, under an HMAC.
func (s *Supervisor) sealState(server, binding, inner string) string {
	b, _ := json.Marshal(sealed{Server: server, Binding: binding, Expires: time.Now().Add(stateTTL).UnixMilli(), Inner: inner})
	payload := base64.RawURLEncoding.EncodeToString(b)
	return statePrefix + payload + "." + s.mac(payload)
}

// errState refuses a retry whose requestState the router did not seal
// for this call; what names the tool, prompt or resource.
func errState(what, why string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("the requestState sent with %s %s; send the request again without it", what, why)}
}

// openState returns the child's own requestState from a state the
// router sealed for this very call to this child.
func (s *Supervisor) openState(state, server, binding, what string) (string, error) {
	rest, ok := strings.CutPrefix(state, statePrefix)
	payload, sum, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 || !hmac.Equal([]byte(sum), []byte(s.mac(payload))) {
		return "", errState(what, "is not one evokore issued (forged or altered)")
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	var st sealed
	if err == nil {
		err = json.Unmarshal(raw, &st)
	}
	switch {
	case err != nil:
		return "", errState(what, "cannot be read")
	case st.Server != server || st.Binding != binding:
		return "", errState(what, "belongs to another call (other arguments, tool or client)")
	case time.Now().UnixMilli() > st.Expires:
		return "", errState(what, "has expired")
	}
	return st.Inner, nil
}

// newStateKey is a random key for a router that shares nothing.
func newStateKey() *[]byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	return &k
}

// contentBinding is what the sealed state of a prompt's or a resource's
// input_required is bound to: the caller, the method and what it names
// (a prompt's name and arguments, a resource's URI).
func contentBinding(sess *session.Session, method string, key any) string {
	b, _ := json.Marshal(key) // a map's keys marshal sorted
	id := ""
	if sess != nil {
		id = sess.ID
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", id, method)
	h.Write(b)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// openInput is a retry's answers to input_required and the child's own
// requestState, opened from the state the router sealed for this request
// to this child; what names the request in the error a caller reads. A
// first request (in nil) has neither.
func (s *Supervisor) openInput(in *router.Input, server, binding string, what func() string) (mcp.InputResponseMap, string, error) {
	if in == nil {
		return nil, "", nil
	}
	state := ""
	if in.State != "" {
		inner, err := s.openState(in.State, server, binding, what())
		if err != nil {
			return nil, "", err
		}
		state = inner
	}
	return in.Responses, state, nil
}

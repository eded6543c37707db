package proxy

//lint:file-ignore SA1019 sampling and roots pass through on purpose; see docs/decisions.md

import (
	"context"
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
	"github.com/evokore/evokore/internal/era"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

// The two protocol eras, on both sides of the router.
//
// Children are asked for 2025-11-25 (initialize) first: every SDK in the
// wild answers it, and a child that speaks both eras (the go-sdk's) keeps
// the semantics its old-era tools were written for; the requests of
// callers of the new era go to a second connection of it, of that era
// (dual.go). A child that refuses initialize is asked again for
// 2026-07-28 (server/discover), and its era is remembered across
// restarts.
//
// A call from a client of the new era carries the _meta triple of that
// era to a child that speaks it (protocol version, the client's
// capabilities and information, per request): the child sees the
// capabilities of the client that called, not of the first client that
// connected (a go-sdk child answers -32021 when one it needs is
// missing). A child of the old era alone gets none.
//
// A child of the new era asks for input by answering input_required. For
// a client of the old era the router plays the new era's client: it asks
// its client (the elicitation, sampling or roots request, over its
// session), and retries the call with the answers, up to maxRounds
// rounds. For a client of the new era it passes the input_required on,
// with the child's requestState sealed (see sealState), so the retry goes
// back to that child, for that call, only.
const (
	// maxRounds bounds the rounds of one call's input requests the router
	// answers for a client of the old era.
	maxRounds = 10
	// stateTTL is how long a sealed requestState is honoured.
	stateTTL = 10 * time.Minute
	// statePrefix marks a requestState the router sealed.
	statePrefix = "evokore-child."
)

// roundTrips reports whether the session's client speaks the new era:
// it gets input_required, never a request of the router's.
func roundTrips(sess *session.Session) bool {
	if sess == nil {
		return false
	}
	if sess.Stateless {
		return true
	}
	if sess.Peer == nil {
		return false
	}
	ip := sess.Peer.InitializeParams()
	return ip != nil && era.Sessionless(ip.ProtocolVersion)
}

// v2Caps is the client capabilities as the new era writes them in _meta
// (roots as an object that may be absent).
type v2Caps struct {
	mcp.ClientCapabilities
	Roots *mcp.RootCapabilities `json:"roots,omitempty"`
}

// eraMeta adds the new era's per-request _meta triple of the calling
// client to meta; nil when the caller is of the old era (the child's
// session says everything then).
func eraMeta(sess *session.Session, meta mcp.Meta) mcp.Meta {
	if !roundTrips(sess) || sess.Peer == nil {
		return meta
	}
	ip := sess.Peer.InitializeParams()
	if ip == nil {
		return meta
	}
	if meta == nil {
		meta = mcp.Meta{}
	}
	caps := v2Caps{}
	if ip.Capabilities != nil {
		caps.ClientCapabilities = *ip.Capabilities
		caps.Roots = ip.Capabilities.RootsV2
		if caps.Roots == nil && ip.Capabilities.Roots != (mcp.RootCapabilities{}) {
			caps.Roots = &mcp.RootCapabilities{ListChanged: ip.Capabilities.Roots.ListChanged}
		}
	}
	meta[mcp.MetaKeyProtocolVersion] = era.SessionlessVersion
	meta[mcp.MetaKeyClientCapabilities] = caps
	if ip.ClientInfo != nil {
		meta[mcp.MetaKeyClientInfo] = ip.ClientInfo
	}
	return meta
}

// childNewEra reports whether the child's session is of the new era.
func childNewEra(cs *mcp.ClientSession) bool {
	ir := cs.InitializeResult()
	return ir != nil && era.Sessionless(ir.ProtocolVersion)
}

// named is an elicitation with the asking server named first, so a child
// cannot dress its question as evokore's own approval prompt.
func named(server string, p *mcp.ElicitParams) *mcp.ElicitParams {
	if p == nil {
		return nil
	}
	cp := *p
	cp.Message = fmt.Sprintf("The '%s' server asks: %s", server, p.Message)
	return &cp
}

// namedRequests is a child's input requests as the client is shown them.
func namedRequests(server string, in mcp.InputRequestMap) mcp.InputRequestMap {
	out := make(mcp.InputRequestMap, len(in))
	for id, r := range in {
		if e, ok := r.(*mcp.ElicitParams); ok {
			r = named(server, e)
		}
		out[id] = r
	}
	return out
}

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

// inputRequired passes a child's input_required on to a client of the
// new era: the requests with the child named, and the child's state
// sealed to this call.
func (s *Supervisor) inputRequired(ch *child, c *router.Call, binding string, res *mcp.CallToolResult) *mcp.CallToolResult {
	reqs := namedRequests(ch.spec.ID, res.InputRequests)
	if reqs == nil {
		reqs = mcp.InputRequestMap{}
	}
	return &mcp.CallToolResult{InputRequests: reqs, RequestState: s.sealState(ch.spec.ID, binding, res.RequestState)}
}

// answerInputs asks the calling client of the old era, over its session,
// what a child of the new era asked for in input_required.
func answerInputs(ctx context.Context, ch *child, sess *session.Session, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	if len(reqs) == 0 {
		return nil, fmt.Errorf("the '%s' server is busy (it asked for no input); try again later", ch.spec.ID)
	}
	if sess == nil || sess.Peer == nil {
		return nil, fmt.Errorf("the '%s' server asked for input, and no client session can answer it", ch.spec.ID)
	}
	peer := sess.Peer
	ip := peer.InitializeParams()
	var caps *mcp.ClientCapabilities
	if ip != nil {
		caps = ip.Capabilities
	}
	out := make(mcp.InputResponseMap, len(reqs))
	for id, r := range reqs {
		var (
			resp mcp.InputResponse
			err  error
		)
		switch p := r.(type) {
		case *mcp.ElicitParams:
			if !hasElicitation(caps) {
				return nil, unsupported("elicitation")
			}
			resp, err = peer.Elicit(ctx, named(ch.spec.ID, p))
		case *mcp.CreateMessageParams:
			if !hasSampling(caps) {
				return nil, unsupported("sampling")
			}
			resp, err = peer.CreateMessage(ctx, p)
		case *mcp.CreateMessageWithToolsParams:
			return nil, fmt.Errorf("the '%s' server asked for sampling with tools, which evokore does not pass on yet", ch.spec.ID)
		case *mcp.ListRootsParams:
			if !hasRoots(caps) {
				return nil, unsupported("roots")
			}
			resp, err = peer.ListRoots(ctx, p)
		default:
			return nil, fmt.Errorf("the '%s' server asked for an input of a kind evokore does not know", ch.spec.ID)
		}
		if err != nil {
			return nil, err
		}
		out[id] = resp
	}
	return out, nil
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

// roundTrip sends a request a child may answer with input_required
// (prompts/get, resources/read), as CallTool does a call: a retry's
// sealed state is opened for this request to this child only; a child's
// input_required goes on to a caller of the new era sealed, and for one
// of the old era the router asks it over its session and sends the
// request again, at most maxRounds times. send sends the request with
// the answers and the child's state; ask is what input_required looks
// like in a result.
func roundTrip[R any](s *Supervisor, ctx context.Context, ch *child, sess *session.Session, binding, what string, in *router.Input,
	send func(ctx context.Context, responses mcp.InputResponseMap, state string) (R, mcp.InputRequestMap, string, error),
	ask func(mcp.InputRequestMap, string) R) (R, error) {
	var zero R
	var responses mcp.InputResponseMap
	state := ""
	if in != nil {
		if in.State != "" {
			inner, err := s.openState(in.State, ch.spec.ID, binding, what)
			if err != nil {
				return zero, err
			}
			state = inner
		}
		responses = in.Responses
	}
	res, reqs, inner, err := send(ctx, responses, state)
	for round := 1; err == nil && reqs != nil; round++ {
		if roundTrips(sess) {
			out := namedRequests(ch.spec.ID, reqs)
			return ask(out, s.sealState(ch.spec.ID, binding, inner)), nil
		}
		if round > maxRounds {
			return zero, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the '%s' server asked for input more than %d times to answer %s; evokore stopped it", ch.spec.ID, maxRounds, what)}
		}
		answers, aerr := answerInputs(ctx, ch, sess, reqs)
		if aerr != nil {
			return zero, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s needs input the client could not give: %v", what, ch.redact.Replace(aerr.Error()))}
		}
		res, reqs, inner, err = send(ctx, answers, inner)
	}
	return res, err
}

package proxy

//lint:file-ignore SA1019 sampling and roots pass through on purpose; see docs/decisions.md

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/era"
	"github.com/evokore/evokore/internal/rawjson"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
)

// The era adapter: every decision that depends on the protocol era of a
// caller (2025-11-25 with a session, 2026-07-28 without) or of a child's
// connection is made in this file and in dual.go, never where a request
// is sent.
//
// Children are asked for 2025-11-25 (initialize) first: every SDK in the
// wild answers it, and a child that speaks both eras (the go-sdk's) keeps
// the semantics its old-era tools were written for; the requests of
// callers of the new era go to a second connection of it, of that era
// (dual.go, connFor). A child that refuses initialize is asked again for
// 2026-07-28 (server/discover), and its era is remembered across
// restarts.
//
// A request of a caller of the new era on a connection of the new era
// carries that era's _meta triple (protocol version, the client's
// capabilities and information): the child sees the capabilities of the
// client that called, not of the first client that connected (a go-sdk
// child answers -32021 when one it needs is missing). A request on a
// connection of the old era gets none (requestMeta).
//
// A child of the new era asks for input by answering input_required. For
// a caller of the old era the router plays the new era's client: it asks
// its client (the elicitation, sampling or roots request, over its
// session), and sends the request again with the answers, up to
// maxRounds rounds. For a caller of the new era it passes the
// input_required on, with the child's requestState sealed (seal.go), so
// the retry goes back to that child, for that request, only.

// maxRounds bounds the rounds of one request's input requests the router
// answers for a caller of the old era.
const maxRounds = 10

// childProtocol is the protocol version children are asked for first.
const childProtocol = era.SessionVersion

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

// takesNoRequest refuses a child's request (sampling, elicitation,
// roots) during a request other than a tool call (a prompt, a read) from
// a client of the new era, which takes no request of the router's; nil
// for a client of the old era. During a tool call the request reaches
// the client as input_required (held.go).
func takesNoRequest(sess *session.Session, server, what string) error {
	if !roundTrips(sess) {
		return nil
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "the client that called " + server + " speaks MCP " + era.SessionlessVersion + ", which takes no " + what + " request; evokore passes one on as input_required during a tool call only"}
}

// protocol is the version the child is asked for at boot.
func (c *child) protocol() string {
	if c.newEra {
		return era.SessionlessVersion
	}
	return childProtocol
}

// configuredNewEra reports whether the child's configuration names the
// new era (protocolVersion): it is asked for that era first.
func configuredNewEra(spec config.Server) bool {
	return spec.ProtocolVersion == era.SessionlessVersion
}

// askNewEra reports whether a boot that failed with err met a child of
// the new era alone, which refuses initialize as an unknown method; it
// is asked that way from then on. Any other error (not ready, a bad key)
// is a server of the old era failing, and is retried as one.
func (c *child) askNewEra(ctx context.Context, err error) bool {
	var we *jsonrpc.Error
	if c.newEra || ctx.Err() != nil || !errors.As(err, &we) || we.Code != jsonrpc.CodeMethodNotFound {
		return false
	}
	c.newEra = true
	c.sup.log.Info("[EVOKORE] A server refused initialize; asking it for MCP "+era.SessionlessVersion, "server", c.spec.ID)
	return true
}

// childNewEra reports whether the child's session is of the new era.
func childNewEra(cs *mcp.ClientSession) bool {
	ir := cs.InitializeResult()
	return ir != nil && era.Sessionless(ir.ProtocolVersion)
}

// v2Caps is the client capabilities as the new era writes them in _meta
// (roots as an object that may be absent).
type v2Caps struct {
	mcp.ClientCapabilities
	Roots *mcp.RootCapabilities `json:"roots,omitempty"`
}

// callerMeta is the new era's per-request _meta triple of the calling
// client; nil when the caller is of the old era (the child's session
// says everything then).
func callerMeta(sess *session.Session) mcp.Meta {
	if !roundTrips(sess) || sess.Peer == nil {
		return nil
	}
	ip := sess.Peer.InitializeParams()
	if ip == nil {
		return nil
	}
	caps := v2Caps{}
	if ip.Capabilities != nil {
		caps.ClientCapabilities = *ip.Capabilities
		caps.Roots = ip.Capabilities.RootsV2
		if caps.Roots == nil && ip.Capabilities.Roots != (mcp.RootCapabilities{}) {
			caps.Roots = &mcp.RootCapabilities{ListChanged: ip.Capabilities.Roots.ListChanged}
		}
	}
	meta := mcp.Meta{mcp.MetaKeyProtocolVersion: era.SessionlessVersion, mcp.MetaKeyClientCapabilities: caps}
	if ip.ClientInfo != nil {
		meta[mcp.MetaKeyClientInfo] = ip.ClientInfo
	}
	return meta
}

// requestMeta is the era's _meta of a request of sess on k: on a
// connection of the new era, the caller's triple with its log level
// (from the caller's own _meta, caller), which that era sends per
// request. A request on a connection of the old era carries none, even
// for a caller of the new era (its child's second connection could not
// be opened, or the child speaks the old era alone): the child reads it
// with what the router's connection declared when it opened, and a
// stateful go-sdk server refuses a request that names the new era
// (-32022) however it would answer the era's question.
func requestMeta(k *conn, sess *session.Session, caller mcp.Meta) mcp.Meta {
	if !k.newEra {
		return nil
	}
	m := callerMeta(sess)
	if m == nil {
		return nil
	}
	if lvl, ok := caller[mcp.MetaKeyLogLevel]; ok {
		m[mcp.MetaKeyLogLevel] = lvl
	}
	return m
}

// binding is what a sealed requestState of the call c on k is bound to
// (callBinding): needed when the connection may answer input_required
// (it is of the new era) or the call is a retry with a state; "" else.
func (k *conn) binding(c *router.Call) (string, error) {
	if !k.newEra && c.Input == nil {
		return "", nil
	}
	return callBinding(c)
}

// result reads a child's answer to c on k as the caller takes it. Bytes
// go on as they are when the caller takes bytes (c.Raw) and they are
// complete: always on a connection of the old era, which has no
// input_required; on one of the new era when resultType says so, without
// the serverInfo the child names itself with (to the client the server
// that answered is evokore). Anything else is decoded, as the SDK's
// client decodes it; an answer the SDK decoded already is taken as is.
func (k *conn) result(c *router.Call, a answer, server string) *mcp.CallToolResult {
	res := a.res
	if res == nil && c.Raw != nil {
		raw, ok := a.raw, true
		if k.newEra {
			raw, ok = completeBytes(raw)
		}
		if ok {
			res = &mcp.CallToolResult{IsError: rawjson.IsTrue(rawjson.Member(raw, "isError"))}
			c.Raw.Bytes, c.Raw.Result = raw, res
			return res
		}
	}
	if res == nil {
		res = &mcp.CallToolResult{}
		if err := json.Unmarshal(a.raw, res); err != nil {
			return errorResult(fmt.Sprintf("the '%s' server answered '%s' with a result evokore cannot read: %v", server, c.Entry.Original, err))
		}
	}
	delete(res.Meta, mcp.MetaKeyServerInfo)
	return res
}

// completeBytes is a child's raw result as the caller gets it when it is
// complete (no resultType, or "complete"), without the serverInfo a
// child of the new era names itself with. ok is false for any other
// resultType.
func completeBytes(res []byte) (out []byte, ok bool) {
	if kind := rawjson.Member(res, "resultType"); kind != nil {
		if v, _ := rawjson.String(kind); v != "complete" {
			return nil, false
		}
	}
	if !bytes.Contains(res, []byte(mcp.MetaKeyServerInfo)) {
		return res, true
	}
	return withoutMeta(res, mcp.MetaKeyServerInfo), true
}

// exchange is one request to a child that may answer input_required
// (tools/call, prompts/get, resources/read), as roundTrip runs it.
type exchange[R any] struct {
	sess *session.Session
	// binding is what the sealed state handed to the caller is bound to.
	binding string
	// names names the request and where its rounds ran, in the texts a
	// caller reads: "'echo'" and "in one call of 'echo'", or "the prompt
	// 'p'" and "to answer the prompt 'p'"; made only when one is shown.
	names func() (what, during string)
	// send sends the request with the answers and the child's state, and
	// returns its result with what it asks for (nil when it is complete)
	// and the child's new state.
	send func(ctx context.Context, responses mcp.InputResponseMap, state string) (R, mcp.InputRequestMap, string, error)
	// pass is the result a caller of the new era gets instead: the
	// child's requests, named, and its state, sealed.
	pass func(mcp.InputRequestMap, string) R
}

// inputFailure ends a request whose input_required the router could not
// answer for a caller of the old era.
type inputFailure struct{ msg string }

func (f *inputFailure) Error() string { return f.msg }

// roundTrip goes on with x's request after the child answered it
// input_required, asking reqs with its state inner: it passes that on to
// a caller of the new era sealed, or asks a caller of the old era over
// its session and sends the request again, at most maxRounds times. An
// *inputFailure says why the rounds stopped.
func roundTrip[R any](ctx context.Context, s *Supervisor, ch *child, x exchange[R], reqs mcp.InputRequestMap, inner string) (R, error) {
	var (
		zero R
		res  R
		err  error
	)
	for round := 1; err == nil && reqs != nil; round++ {
		if roundTrips(x.sess) {
			return x.pass(namedRequests(ch.spec.ID, reqs), s.sealState(ch.spec.ID, x.binding, inner)), nil
		}
		what, during := x.names()
		if round > maxRounds {
			return zero, &inputFailure{fmt.Sprintf("the '%s' server asked for input more than %d times %s; evokore stopped it", ch.spec.ID, maxRounds, during)}
		}
		answers, aerr := answerInputs(ctx, ch, x.sess, reqs)
		if aerr != nil {
			return zero, &inputFailure{fmt.Sprintf("%s needs input the client could not give: %v", what, ch.redact.Replace(aerr.Error()))}
		}
		res, reqs, inner, err = x.send(ctx, answers, inner)
	}
	return res, err
}

// named is an elicitation with the asking server named first, so a child
// cannot dress its question as evokore's own approval prompt, and
// without the id of the child's own task it may be for (childtask.go).
func named(server string, p *mcp.ElicitParams) *mcp.ElicitParams {
	if p == nil {
		return nil
	}
	cp := *p
	cp.Message = fmt.Sprintf("The '%s' server asks: %s", server, p.Message)
	cp.Meta = withoutRelated(p.Meta)
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

// Package ingress is where a client's message enters the router. The
// router's two client transports sit side by side on it, peers that
// never import each other: stdio (package stdio: one message per line on
// stdin and stdout) and streamable HTTP (package httpsession: POST
// bodies, event streams, sessions kept in a store). Each owns its
// framing; both reach the router only through Router, which package
// server implements and composes them over, as the go-sdk's stdio and
// streamable transports are peers over one Connection:
//
//	stdin/stdout ── stdio ───────┐
//	                             ├── ingress.Router ── server (views, pipeline)
//	POST/GET /mcp ── httpsession ┘
//
// A message takes one of two paths, by one rule:
//
// The byte path carries a tools/call of a proxied tool from a client past
// its handshake (or a sessionless request) whose params hold nothing but
// name, arguments and the _meta its transport delivers (Via), and the
// cancellation of a call it carries; the SDK path, the client's view (an
// mcp.Server), carries everything else.
//
// Router.Take applies the rule, in one place; a transport only offers it
// the messages it read whose framing the SDK would accept as they are,
// and answers what it takes with the arguments and the result kept as the
// bytes the client and the child sent (see package proxy).
//
// Below the framing both transports share what this package also holds:
// reading a message's envelope in place (Scan), checking a message as the
// go-sdk would before it decodes one (Check, Decode; a body HTTP hands the
// SDK is refused as its frame is over stdio), answering by bytes (Replier,
// Answer), and the calls a byte path runs, by id, for the client's
// cancellation (Inflight).
package ingress

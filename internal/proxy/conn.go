package proxy

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
)

// conn is one open connection to a child: the SDK's client session over
// it, the carrier its transport has for tools/call, and the order of
// its notifications. A child has one, and a second one of the new era
// when it speaks both (dual.go); both are opened by connect.
type conn struct {
	cs *mcp.ClientSession
	// proc is a stdio child's process, nil for a remote child.
	proc    *process
	carrier carrier
	order   noteOrder
	// client is the router's client of cs, which tells the child that
	// its roots changed (instances.go).
	client *mcp.Client
	// newEra is set when the session speaks MCP 2026-07-28.
	newEra bool
	// second marks the child's connection of the new era (dual.go).
	second bool
	// asks is set when the child was offered sampling, elicitation or
	// roots: it may ask for them during a call (held.go).
	asks bool
}

// errConnectTimeout is a handshake that did not end within the boot
// timeout.
type errConnectTimeout struct{ error }

func (e errConnectTimeout) Unwrap() error { return e.error }

// connect opens a connection to the child (a process from its command,
// or its URL) and shakes hands in protocol, with a client of opts and
// the receiving middleware mw.
func (c *child) connect(ctx context.Context, spec config.Server, protocol string, opts *mcp.ClientOptions, mw ...mcp.Middleware) (*conn, error) {
	timeout := c.sup.bootTimeout(c.spec)
	transport, proc, post, err := c.dial(spec, timeout)
	if err != nil {
		return nil, err
	}
	k := &conn{proc: proc, asks: offersInput(opts)}
	if proc != nil {
		proc.stdout.noted = k.order.sawRead
	} else if spec.Transport != config.TransportHTTP {
		transport = orderedTransport{Transport: transport, order: &k.order}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "evokore-proxy-" + spec.ID, Version: c.sup.opts.Version}, opts)
	registerSkillMethods(client)
	k.client = client
	client.AddReceivingMiddleware(append(mw, k.order.middleware)...)
	if post != nil {
		post.receive = receiving(opts, mw)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	k.cs, err = client.Connect(cctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		if proc != nil {
			proc.stopAfter(200 * time.Millisecond)
		}
		if errors.Is(err, context.DeadlineExceeded) || cctx.Err() == context.DeadlineExceeded {
			return nil, errConnectTimeout{err}
		}
		return nil, err
	}
	if proc != nil {
		k.carrier = proc.wire
	} else {
		k.carrier = httpCarrier{cs: k.cs, post: post}
	}
	k.newEra = childNewEra(k.cs)
	return k, nil
}

// dial opens a transport to the child: to its URL (with the poster of a
// streamable HTTP child), or to a process started from its command (in
// its environment and sandbox).
func (c *child) dial(spec config.Server, timeout time.Duration) (mcp.Transport, *process, *poster, error) {
	if spec.IsHTTP() {
		t, post, err := c.httpTransport(spec, timeout)
		return t, nil, post, err
	}
	if spec.Command == "" {
		return nil, nil, nil, errFatal{errors.New(MsgNoCommand(spec.ID))}
	}
	// A child that takes no input for a whole request timeout is broken:
	// it is stopped, and restarted as a crashed one would be.
	bound := c.sup.requestTimeout(spec)
	var proc *process
	proc, err := startProcess(spec, c.sup.opts.Env, c.sup.opts.Log, c.sup.opts.ShutdownGrace, bound, func() {
		c.sup.log.Info("[EVOKORE] A server stopped reading its input; stopping it", "server", spec.ID, "waitedMs", bound.Milliseconds())
		c.stoppedReading(proc)
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return &mcp.IOTransport{Reader: proc.stdout, Writer: proc.stdin}, proc, nil, nil
}

// abandon ends a connection that will not be used: its session and its
// process, without waiting for a child that takes its time.
func (k *conn) abandon() {
	_ = k.cs.Close()
	if k.proc != nil {
		k.proc.stopAfter(200 * time.Millisecond)
	}
}

// stop closes the connection and ends its process.
func (k *conn) stop(grace time.Duration) {
	if k.cs != nil {
		go k.cs.Close() // closes stdin; may block on a wedged child
	}
	if k.proc != nil {
		k.proc.stopAfter(grace)
	}
}

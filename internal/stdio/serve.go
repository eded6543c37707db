package stdio

import (
	"context"

	"github.com/evokore/evokore/internal/ingress"
)

// Serve serves one client over t until it closes its input or ctx ends:
// the client's view on the SDK path, and the calls the router takes
// (ingress.Router.Take, their progress delivered on the same stream) on
// the byte path. It returns how the session ended; io.EOF when the
// client left.
func Serve(ctx context.Context, t *Transport, rt ingress.Router) error {
	v := rt.Open(ingress.SessionOptions{})
	// The byte path is in place before the connection reads its first
	// frame: a client answered by the greeting sends its calls at once,
	// and a call read before it was would go to the SDK path, which
	// knows nothing of what only the router serves (a task's
	// params.task is dropped there and the call answered plainly). A
	// call read while Connect binds the view to its session waits for
	// the binding, on the reading goroutine (reading order holds, and
	// Connect does not read); one read after a failed Connect is left to
	// the SDK path.
	bound := make(chan struct{})
	var connected bool
	t.Carry(func(m ingress.Message) (ingress.Call, bool) {
		<-bound
		if !connected {
			return nil, false
		}
		return rt.Take(v, m, ingress.Via{Progress: true, Notify: t.Notify})
	})
	// ctx ends the serving; the session must not die with it, or the
	// answers of the calls in flight are lost.
	ss, err := v.Connect(context.WithoutCancel(ctx), t, nil)
	connected = err == nil
	close(bound)
	if err != nil {
		t.Carry(nil)
		return err
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
		return err
	case <-ctx.Done():
		return nil
	}
}

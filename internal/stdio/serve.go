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
	// ctx ends the serving; the session must not die with it, or the
	// answers of the calls in flight are lost.
	ss, err := v.Connect(context.WithoutCancel(ctx), t, nil)
	if err != nil {
		return err
	}
	t.Carry(func(m ingress.Message) (ingress.Call, bool) {
		return rt.Take(v, m, ingress.Via{Progress: true})
	})
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
		return err
	case <-ctx.Done():
		return nil
	}
}

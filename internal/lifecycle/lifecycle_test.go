package lifecycle_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/lifecycle"
)

// Parts start in the order they were registered and stop in reverse; a
// goroutine started with Go is joined by Stop, after its context ended.
func TestStartInOrderStopInReverseAndJoin(t *testing.T) {
	var g lifecycle.Group
	var log []string
	exited := make(chan struct{})
	for _, name := range []string{"a", "b"} {
		g.OnStart(func(context.Context) { log = append(log, "start "+name) })
		g.OnStop(func() { log = append(log, "stop "+name) })
	}
	g.OnStart(func(ctx context.Context) {
		g.Go(func() {
			<-ctx.Done()
			close(exited)
		})
	})
	g.Start()
	g.Start()
	g.Stop()
	select {
	case <-exited:
	default:
		t.Fatal("Stop returned before the goroutine it started ended")
	}
	g.Stop()
	if got := strings.Join(log, ", "); got != "start a, start b, stop b, stop a" {
		t.Errorf("order: %s", got)
	}
}

// Stopping what never started stops the parts and starts nothing later.
func TestStopBeforeStart(t *testing.T) {
	var g lifecycle.Group
	started, stopped := false, false
	g.OnStart(func(context.Context) { started = true })
	g.OnStop(func() { stopped = true })
	g.Stop()
	g.Start()
	if started || !stopped {
		t.Errorf("started %v, stopped %v", started, stopped)
	}
}

func ExampleGroup() {
	var g lifecycle.Group
	g.OnStart(func(ctx context.Context) { fmt.Println("watching") })
	g.OnStop(func() { fmt.Println("store closed") })
	g.Start()
	g.Stop()
	// Output:
	// watching
	// store closed
}

// Wait returns once the work in flight ended; CancelAll cancels what is
// still running, and a Wait bounded by its context gives up.
func TestInFlightWaitsAndCancels(t *testing.T) {
	var f lifecycle.InFlight
	if !f.Wait(context.Background()) {
		t.Fatal("Wait with nothing in flight")
	}
	ctx, end := f.Begin(context.Background())
	short, cancel := context.WithCancel(context.Background())
	cancel()
	if f.Wait(short) {
		t.Fatal("Wait returned true with work in flight")
	}
	f.CancelAll()
	<-ctx.Done()
	end()
	if !f.Wait(context.Background()) {
		t.Fatal("Wait after the work ended")
	}
}

// Package lifecycle starts and stops a program's long-lived parts in
// order, the way net/http.Server separates serving from the handler and
// Caddy provisions modules and cleans them up: parts register what they
// start and what they stop while they are assembled, and nothing runs
// until Start.
//
//	var l lifecycle.Group
//	l.OnStart(func(ctx context.Context) { l.Go(func() { watch(ctx) }) })
//	l.OnStop(store.Close)
//	l.Start()      // the OnStart functions, in registration order
//	l.Stop()       // cancels ctx, OnStop in reverse order, joins l.Go
//
// Start and Stop each act once; Stop before Start runs the stoppers
// (the parts were built) and starts nothing. The zero value is ready.
package lifecycle

import (
	"context"
	"sync"
)

// Group is a set of parts started and stopped together.
type Group struct {
	starting sync.Mutex // held while the OnStart functions run
	mu       sync.Mutex
	starters []func(context.Context)
	stoppers []func()
	started  bool
	stopped  bool
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// OnStart registers fn to run at Start, after those registered before
// it. fn gets a context that ends at Stop; it must not block: what runs
// on goes through Go.
func (g *Group) OnStart(fn func(ctx context.Context)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.starters = append(g.starters, fn)
}

// OnStop registers fn to run at Stop, before those registered before it
// (what was built last stops first, as deferred calls do).
func (g *Group) OnStop(fn func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stoppers = append(g.stoppers, fn)
}

// Start runs the OnStart functions once, in order. A Start that finds
// another running waits for it, so whoever Start returns to may use the
// parts.
func (g *Group) Start() {
	g.starting.Lock()
	defer g.starting.Unlock()
	g.mu.Lock()
	if g.started || g.stopped {
		g.mu.Unlock()
		return
	}
	g.started = true
	ctx := g.context()
	starters := g.starters
	g.mu.Unlock()
	for _, fn := range starters {
		fn(ctx)
	}
}

// Context is the context the parts run under: it ends at Stop.
func (g *Group) Context() context.Context {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.context()
}

func (g *Group) context() context.Context {
	if g.ctx == nil {
		g.ctx, g.cancel = context.WithCancel(context.Background())
	}
	return g.ctx
}

// Go runs fn on a goroutine that Stop waits for. fn should return once
// Context ends.
func (g *Group) Go(fn func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		fn()
	}()
}

// Stop ends Context, runs the OnStop functions once, last registered
// first, and waits for every goroutine started with Go.
func (g *Group) Stop() {
	g.mu.Lock()
	if g.stopped {
		g.mu.Unlock()
		return
	}
	g.stopped = true
	g.context()
	cancel, stoppers := g.cancel, g.stoppers
	g.mu.Unlock()
	cancel()
	for i := len(stoppers) - 1; i >= 0; i-- {
		stoppers[i]()
	}
	g.wg.Wait()
}

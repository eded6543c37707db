package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/evokore/evokore/internal/server"
)

func newServe(p *paths) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Serve MCP over stdio (the default command)",
		Long: `serve answers MCP on stdin/stdout. The handshake is answered at once; child
servers boot in the background after it. It exits when the client closes
stdin, or on SIGINT or SIGTERM, and stops every child first.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context(), p)
		},
	}
}

func serve(ctx context.Context, p *paths) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopSignals := onSignals(cancel)
	defer stopSignals()
	defer debugMemStats()()
	s, warnings := p.servingSettings()
	for _, w := range warnings {
		fmt.Fprintln(os.Stderr, w)
	}
	// A config or permissions file a flag or variable names must exist: a
	// typo in its path would otherwise serve no children, or drop the
	// user's rules for the shipped ones.
	for _, f := range []struct{ path, from string }{{s.ConfigPath, s.ConfigPathFrom}, {s.PermissionsPath, s.PermissionsPathFrom}} {
		if _, err := os.Stat(f.path); f.from != "" && errors.Is(err, fs.ErrNotExist) {
			return &exitError{1, fmt.Errorf("%s names %s, which does not exist", f.from, f.path)}
		}
	}
	srv := server.New(server.Options{Settings: s, Version: buildVersion(), Log: os.Stderr})
	return srv.ServeStdio(ctx)
}

// onSignals makes the first SIGINT or SIGTERM call shutdown, and a second
// one end the process at once, by that signal (children still die with
// it: they carry the parent-death signal). Signals are queued, so a
// second one that arrives while the first is being handled still counts.
func onSignals(shutdown func()) (stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			fmt.Fprintln(os.Stderr, "[EVOKORE] Shutting down: calls in flight may finish; a second signal ends evokore at once.")
			shutdown()
		case <-done:
			return
		}
		select {
		case sig := <-sigs:
			signal.Reset(os.Interrupt, syscall.SIGTERM)
			if p, err := os.FindProcess(os.Getpid()); err == nil && p.Signal(sig) == nil {
				select {} // the default disposition ends the process
			}
			os.Exit(130)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/gcpolicy"
	"github.com/evokore/evokore/internal/logging"
	"github.com/evokore/evokore/internal/server"
)

func newServe(p *paths) *cobra.Command {
	var h httpFlags
	cmd := &cobra.Command{
		Use:   "serve [--http [ADDR]] [--insecure]",
		Short: "Serve MCP over stdio (the default command) or streamable HTTP",
		Long: `serve answers MCP on stdin/stdout. The handshake is answered at once; child
servers boot in the background after it. It exits when the client closes
stdin, or on SIGINT or SIGTERM, and stops every child first.

mcp.config.json and permissions.yml are reloaded when they change on
disk and on SIGHUP: a file that does not validate is refused with its
file:line:col and the running configuration keeps serving.

With --http (or EVOKORE_HTTP_MODE=true) it serves MCP over streamable HTTP
at http://ADDR/mcp instead (default EVOKORE_HTTP_HOST:EVOKORE_HTTP_PORT,
127.0.0.1:3100), one session per client. It refuses to listen on an
address other than loopback without EVOKORE_AUTH_REQUIRED=true, unless
--insecure is given. On SIGINT or SIGTERM it stops accepting, lets calls
in flight finish (bounded), closes the sessions and stops every child.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				if !cmd.Flags().Changed("http") {
					return &exitError{2, fmt.Errorf("unexpected argument %q (did you mean --http %s?)", args[0], args[0])}
				}
				h.addr = args[0]
			}
			h.set = cmd.Flags().Changed("http")
			return serve(cmd.Context(), p, h)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&h.addr, "http", "", "serve streamable HTTP on ADDR (host:port; default EVOKORE_HTTP_HOST:EVOKORE_HTTP_PORT)")
	fl.Lookup("http").NoOptDefVal = defaultAddr
	fl.BoolVar(&h.insecure, "insecure", false, "allow --http on a non-loopback address without authentication")
	return cmd
}

func serve(ctx context.Context, p *paths, h httpFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopSignals := onSignals(cancel)
	defer stopSignals()
	defer debugMemStats()()
	defer debugCPUProfile()()
	// The schema compiles on another core while the settings are read.
	go config.Prepare()
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
	hs, more := config.ReadHTTPSettings(s.Env)
	for _, w := range more {
		fmt.Fprintln(os.Stderr, w)
	}
	if h.set || hs.Enabled {
		return serveHTTP(ctx, p, s, hs, h)
	}
	// The handshake is answered from here on, while the configuration
	// is read and the server assembled.
	logger := logging.New(os.Stderr, slog.LevelInfo)
	stdin := server.OpenStdio(buildVersion(), logger)
	srv := server.New(server.Options{Settings: s, Version: buildVersion(), Log: os.Stderr, Logger: logger, Watch: true, Settle: p.settleProjectFiles})
	stopHangup := reloadOnHangup(srv)
	defer stopHangup()
	// The start ends once the children finished their first boot: the
	// start's extra P is given back and the heap it no longer uses returned
	// (internal/gcpolicy).
	go func() {
		select {
		case <-srv.ChildrenBooted():
			gcpolicy.Settle()
		case <-ctx.Done():
		}
	}()
	return srv.ServeStdio(ctx, stdin)
}

// reloadOnHangup reloads the configuration files on every SIGHUP, the
// daemon convention, until stop is called. The server reports each
// reload, done or refused, on stderr. SIGHUP no longer ends evokore.
func reloadOnHangup(srv *server.Server) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-hup:
				fmt.Fprintln(os.Stderr, "[EVOKORE] SIGHUP: reloading mcp.config.json and permissions.yml.")
				_, _ = srv.Reload()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
		<-finished
	}
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

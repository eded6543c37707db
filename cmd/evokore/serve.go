package main

import (
	"context"
	"fmt"
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
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal starts a graceful shutdown; restoring the default
	// disposition lets a second one end the process at once (children
	// still die with it: they carry the parent-death signal).
	go func() {
		<-ctx.Done()
		stop()
	}()
	s, warnings := p.servingSettings()
	for _, w := range warnings {
		fmt.Fprintln(os.Stderr, w)
	}
	srv := server.New(server.Options{Settings: s, Version: buildVersion(), Log: os.Stderr})
	return srv.ServeStdio(ctx)
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/evokore/evokore/internal/childauth"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/jsonenc"
)

func newAuth(p *paths) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Authorize evokore to the HTTP servers that ask for OAuth",
		Long: `An HTTP child that answers 401 wants evokore to sign in to it, as an MCP
OAuth client: 'auth login SERVER' opens the browser on the server's
authorization page and keeps the tokens under EVOKORE_HOME (owner-only). A
running evokore picks them up and boots the server; it refreshes them
before they expire. 'auth status' shows each server's state, never a
token; 'auth logout SERVER' revokes them where the server can, and forgets
them. See docs/remote-servers.md.`,
	}
	cmd.AddCommand(newAuthLogin(p), newAuthStatus(p), newAuthLogout(p))
	return cmd
}

// authServer is the server id names in the configuration, with the
// manager of its authorization.
func authServer(p *paths, id string) (config.Server, *childauth.Manager, error) {
	s, _ := p.servingSettings()
	cfg, err := config.LoadMCPConfig(s.ConfigPath)
	if err != nil {
		return config.Server{}, nil, err
	}
	srv, ok := cfg.Server(id)
	if !ok {
		return config.Server{}, nil, fmt.Errorf("no server '%s' in %s", id, s.ConfigPath)
	}
	if srv.Invalid != "" {
		return config.Server{}, nil, fmt.Errorf("server '%s' is not valid: %s", id, srv.Invalid)
	}
	m := childauth.New(childauth.Options{Home: s.Home, Env: s.Env,
		Open: func(ctx context.Context, url string) error { return childauth.OpenBrowser(ctx, url, os.Stderr) }})
	return *srv, m, nil
}

func newAuthLogin(p *paths) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "login SERVER",
		Short: "Sign evokore in to an HTTP server (opens the browser)",
		Long: `Sign evokore in to an HTTP server: evokore connects to it, and when the
server asks for authorization, opens its authorization page ($BROWSER when
set, else the system's browser; the URL is printed too) and waits for the
redirect on a loopback port. The tokens are kept under EVOKORE_HOME.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			srv, m, err := authServer(p, args[0])
			if err != nil {
				return &exitError{1, err}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			e, err := m.Login(ctx, srv, buildVersion())
			if e == nil {
				return &exitError{1, err}
			}
			writeAuthState(cmd.OutOrStdout(), []childauth.State{m.StateOf(srv)})
			if err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), err)
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "how long to wait for the browser's redirect")
	return cmd
}

func newAuthStatus(p *paths) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each HTTP server's authorization (never a token)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, _ := p.servingSettings()
			cfg, err := config.LoadMCPConfig(s.ConfigPath)
			if err != nil {
				return &exitError{1, err}
			}
			m := childauth.New(childauth.Options{Home: s.Home, Env: s.Env})
			states := []childauth.State{}
			for _, srv := range cfg.Servers {
				if srv.Invalid == "" && childauth.Applies(srv) {
					states = append(states, m.StateOf(srv))
				}
			}
			if format == "json" {
				return writeJSON(cmd.OutOrStdout(), states)
			}
			if len(states) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "No HTTP server that evokore authorizes itself to.")
				return nil
			}
			writeAuthState(cmd.OutOrStdout(), states)
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	return cmd
}

func newAuthLogout(p *paths) *cobra.Command {
	return &cobra.Command{
		Use:   "logout SERVER",
		Short: "Revoke evokore's tokens for a server where it can, and forget them",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			srv, m, err := authServer(p, args[0])
			if err != nil {
				return &exitError{1, err}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), time.Minute)
			defer cancel()
			revoked, err := m.Logout(ctx, srv)
			if err != nil {
				return &exitError{1, err}
			}
			how := "forgot its tokens (its authorization server has no revocation endpoint)"
			if revoked {
				how = "revoked its tokens and forgot them"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Logged out of '%s': %s.\n", jsonenc.Graphic(srv.ID), how)
			return nil
		},
	}
}

// writeAuthState writes one line per server: its state, scopes and
// expiry, never a token.
func writeAuthState(w io.Writer, states []childauth.State) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tSCOPES\tEXPIRES")
	for _, st := range states {
		expires := "-"
		if st.Expires != nil {
			expires = st.Expires.Local().Format(time.DateTime)
			if st.Refreshable {
				expires += " (refreshed)"
			}
		}
		state := st.Status
		if st.Problem != "" {
			state += ": " + st.Problem
		}
		scopes := strings.Join(st.Scopes, " ")
		if scopes == "" {
			scopes = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", jsonenc.Graphic(st.Server), state, jsonenc.Graphic(scopes), expires)
	}
	tw.Flush()
}

package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/sessionstore"
	"github.com/evokore/evokore/internal/sharedstate"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/dashboard"
	"github.com/evokore/evokore/internal/httpguard"
	"github.com/evokore/evokore/internal/operatorkey"
	"github.com/evokore/evokore/internal/trust"
)

func newDashboard(p *paths) *cobra.Command {
	return &cobra.Command{
		Use:   "dashboard",
		Short: "Serve the session dashboard on http://127.0.0.1:8899",
		Long: `The dashboard shows the sessions under EVOKORE_HOME (hook sessions and the
sessions routers recorded), a session's replay, the audit log, and the calls
running routers hold for approval, live, with Approve and Deny.

Approving and denying need the operator key (secrets/operator.key in EVOKORE_HOME,
made on first use): sign in with it, or with the one-time link the dashboard
prints when it starts. An agent's shell that its client keeps from reading
that file cannot decide approvals here.

Settings: EVOKORE_DASHBOARD_PORT (8899), EVOKORE_DASHBOARD_HOST (127.0.0.1;
another address needs a token), EVOKORE_DASHBOARD_TOKEN (require it: a bearer
header or the login page), EVOKORE_DASHBOARD_ROLE (readonly, developer or
admin; default admin without a token, readonly with one),
EVOKORE_DASHBOARD_APPROVAL_WS_URL (comma-separated /ws/approvals URLs of
routers whose EVOKORE_HOME is elsewhere) and
EVOKORE_DASHBOARD_APPROVAL_WS_TOKEN. It stops on SIGINT or SIGTERM.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := slog.New(slog.NewTextHandler(os.Stderr, nil))
			s, _ := p.servingSettings()
			env, _, ignored := config.LoadProjectEnv(".env", trust.Trusted(s.Home, ".", ".env"))
			if len(ignored) > 0 {
				log.Warn("ignoring security settings in ./.env: the project directory is not trusted", "keys", strings.Join(ignored, ", "))
			}
			opts, addr, warnings, err := dashboard.ReadOptions(env, s.Home)
			for _, w := range warnings {
				log.Warn(w)
			}
			if err != nil {
				return &exitError{1, err}
			}
			opts.SessionTTL = s.SessionTTL
			opts.OnDecision = auditDecision(s, "the dashboard")
			// Replicas that share Redis keep their HTTP sessions and
			// approvals there: the dashboard reads and decides them there.
			if share := sharedstate.ReadOptions(s.Env, s.Home, s.SessionTTL); share.Enabled() {
				store, err := sessionstore.Open(share.Store)
				if err != nil {
					return &exitError{1, fmt.Errorf("dashboard: %w", err)}
				}
				defer store.Close()
				opts.Store = store
				sh, err := sharedstate.Open(contextOr(cmd.Context()), share)
				if err != nil {
					return &exitError{1, fmt.Errorf("dashboard: %w", err)}
				}
				if sh != nil {
					defer sh.Close()
					opts.Approvals = sharedApprovals{sh}
				}
			}
			d, err := dashboard.New(opts)
			if err != nil {
				return &exitError{1, fmt.Errorf("dashboard: %w", err)}
			}
			defer d.Close()
			if err := d.Start(); err != nil {
				return &exitError{1, fmt.Errorf("dashboard: %w", err)}
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return &exitError{1, fmt.Errorf("dashboard: %w", err)}
			}
			srv := httpguard.NewServer(d.Handler(), httpguard.Timeouts{})
			ln = httpguard.Listener(ln, httpguard.Caps{})
			fmt.Fprintf(cmd.ErrOrStderr(), "[EVOKORE] Dashboard listening on http://%s (role %s)\n", ln.Addr(), d.Role())
			// The sign-in link goes only where the operator started the
			// dashboard: it works once, and approving needs it (or the key).
			fmt.Fprintf(cmd.ErrOrStderr(), "[EVOKORE] To approve and deny, sign in as the operator: http://%s/login?code=%s (works once, within 10 minutes; later, sign in with the key in %s)\n",
				ln.Addr(), d.SignInCode(), operatorkey.Path(s.Home))
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ln) }()
			select {
			case err := <-served:
				if err != nil && !errors.Is(err, http.ErrServerClosed) {
					return &exitError{1, fmt.Errorf("dashboard: %w", err)}
				}
				return nil
			case <-ctx.Done():
			}
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			// Live approval streams end only when the dashboard closes.
			d.Close()
			_ = srv.Shutdown(sctx)
			return nil
		},
	}
}

// sharedApprovals are the approvals replicas keep in Redis, as the
// dashboard lists and decides them.
type sharedApprovals struct{ sh *sharedstate.Shared }

func (a sharedApprovals) List(ctx context.Context) ([]policy.PendingApproval, error) {
	return policy.ListShared(ctx, a.sh.Approvals)
}

func (a sharedApprovals) Decide(ctx context.Context, id, verdict string) error {
	return a.sh.Approvals.Decide(ctx, id, verdict)
}

package vet

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/manifest"
	"github.com/evokore/evokore/internal/proxy"
)

// live boots every enabled child, reports the ones that fail, and checks
// what needs real tool names: prefixed-name collisions, and profile,
// override and rule names that no booted server serves. Booting also
// refreshes the manifest cache, so later starts list the tools at once.
func (c *checker) live(home string, t config.ChildTimeouts, booted func(proxy.ServerStatus)) {
	var mu sync.Mutex
	first := func(st proxy.ServerStatus) {
		// Children end their boots on their own goroutines; the caller
		// is told one at a time.
		mu.Lock()
		defer mu.Unlock()
		booted(st)
	}
	if booted == nil {
		first = nil
	}
	statuses := proxy.BootOnce(proxy.Options{
		FirstBoot:      first,
		Servers:        c.cfg.Servers,
		Env:            c.env,
		Home:           home,
		BootTimeout:    t.Boot,
		RequestTimeout: t.Request,
		ShutdownGrace:  t.ShutdownGrace,
		Log:            io.Discard,
		Version:        "vet",
	})
	for _, st := range statuses {
		srv, _ := c.cfg.Server(st.ID)
		if st.Status == proxy.StatusError && srv.Invalid == "" { // an invalid server's problems are reported where written
			c.report(config.SeverityError, c.cfg.KeyPos(srv.Path()...), CodeBootFailed,
				"server '%s' failed to boot: %s", st.ID, st.LastError)
		}
	}

	// Every booted server's own list, before collisions are resolved.
	c.served = map[string]map[string]bool{}
	owners := map[string][]string{}
	for _, srv := range c.cfg.Servers {
		tools := manifest.Cached(home, []config.Server{srv})[srv.ID]
		if tools == nil {
			continue
		}
		names := map[string]bool{}
		for _, t := range tools {
			name := srv.PublicName(t.Name)
			names[name] = true
			owners[name] = append(owners[name], srv.ID)
			if len(name) > maxToolName || !validName().MatchString(name) {
				c.report(config.SeverityError, c.cfg.KeyPos(srv.Path()...), CodeInvalidToolName,
					"server '%s' serves '%s', a name clients reject (1-%d letters, digits, '_' or '-')", srv.ID, name, maxToolName)
			}
		}
		c.served[srv.ID] = names
	}
	for _, name := range sortedKeys(owners) {
		if ids := owners[name]; len(ids) > 1 {
			second, _ := c.cfg.Server(ids[1])
			c.report(config.SeverityWarning, c.cfg.KeyPos(second.Path()...), CodeCollision,
				"'%s' is served by %s; the first in config order wins and the others are hidden", name, quoteList(ids))
		}
	}

	for _, p := range c.cfg.Discovery.Profiles {
		for i, name := range p.AlwaysVisible.Names {
			c.servedName(c.cfg.Pos("discovery", "profiles", p.Name, "alwaysVisible", fmt.Sprint(i)), fmt.Sprintf("profile '%s'", p.Name), name)
		}
	}
	if c.perms != nil && !c.perms.Missing {
		for _, r := range c.perms.Roles {
			for tool := range r.Overrides {
				c.servedName(c.perms.KeyPos("roles", r.Name, "overrides", tool), fmt.Sprintf("role '%s'", r.Name), tool)
			}
		}
		for tool := range c.perms.Rules {
			c.servedName(c.perms.KeyPos("rules", tool), "rules", tool)
		}
	}
}

// servedName warns about a proxied name its server does not serve.
func (c *checker) servedName(pos config.Position, where, name string) {
	server, ok := serverOf(c.cfg, name)
	if !ok {
		return
	}
	names, booted := c.served[server]
	if booted && !names[name] {
		c.report(config.SeverityWarning, pos, CodeUnknownTool,
			"%s names '%s', but server '%s' serves no such tool", where, name, server)
	}
}

func sortedKeys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func quoteList(ids []string) string {
	quoted := make([]string, len(ids))
	for i, id := range ids {
		quoted[i] = "'" + id + "'"
	}
	return strings.Join(quoted, ", ")
}

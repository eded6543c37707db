package budget

import (
	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/manifest"
	"github.com/evokore/evokore/internal/native"
)

// Holder says which of a server's tools pinning would hold right now
// (policy.Pins.Holds), without recording anything.
type Holder interface {
	Holds(server config.Server, entries []*catalog.Entry) map[string]string
}

// Catalog is the catalog a fresh router over cfg would serve, without
// starting anything: every native tool of the generated table, then each
// server's tools from the manifest cache under home, in config order,
// with the tools pins holds marked as a router would (they are never
// listed; nil pins holds nothing). Nothing under home is written.
func Catalog(cfg *config.MCPConfig, home string, pins Holder) *catalog.Snapshot {
	var natives []*catalog.Entry
	for _, s := range native.Specs() {
		natives = append(natives, catalog.NewEntry(s.Tool(), catalog.SourceNative))
	}
	var ids []string
	for _, s := range cfg.Servers {
		ids = append(ids, s.ID)
	}
	store := catalog.NewStore(natives, ids)
	cached := manifest.Cached(home, cfg.Servers)
	for _, srv := range cfg.Servers {
		tools, ok := cached[srv.ID]
		if !ok {
			continue
		}
		entries := catalog.PrefixedEntries(srv.ID, srv.NamePrefix(), tools)
		if pins != nil && srv.PinningEnabled() {
			catalog.Hold(entries, pins.Holds(srv, entries))
		}
		store.SetServerEntries(srv.ID, entries)
	}
	return store.Snapshot()
}

// Profiles lists the shipped profiles, with the config's own replacing
// the shipped ones of the same name or following them.
func Profiles(cfg *config.MCPConfig) []*catalog.Profile {
	var out []*catalog.Profile
	index := map[string]int{}
	for _, pr := range catalog.ShippedProfiles() {
		index[pr.Name] = len(out)
		out = append(out, &pr)
	}
	isNative := func(n string) bool { _, ok := native.Lookup(n); return ok }
	for _, up := range cfg.Discovery.Profiles {
		pr := catalog.FromConfig(up, isNative)
		if i, ok := index[pr.Name]; ok {
			out[i] = &pr
		} else {
			out = append(out, &pr)
		}
	}
	return out
}

package catalog

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Snapshot is the catalog at one moment: natives first, then each
// server's tools in config order, each server's in the child's order. It
// never changes; a new snapshot replaces it.
type Snapshot struct {
	// Epoch increases with every published snapshot.
	Epoch   uint64
	Entries []*Entry

	byName     map[string]*Entry
	superseded chan struct{}

	indexOnce sync.Once
	index     *index
}

// Lookup returns the entry clients call by name.
func (s *Snapshot) Lookup(name string) (*Entry, bool) {
	e, ok := s.byName[name]
	return e, ok
}

// Superseded is closed when a newer snapshot is published: a session view
// waits on it to refresh its listing.
func (s *Snapshot) Superseded() <-chan struct{} { return s.superseded }

// Registration reports what publishing one server's tools did.
type Registration struct {
	Registered int
	// Skipped are this server's prefixed names that an earlier entry in
	// catalog order already takes; the first registration wins.
	Skipped []string
	// Displaced are other servers' names this registration now takes,
	// because this server comes first in config order.
	Displaced map[string][]string
}

// Store owns the catalog: it assembles snapshots from the natives and
// each server's latest tool list, and publishes them atomically. Readers
// never lock; writers are serialised.
type Store struct {
	mu      sync.Mutex
	natives []*Entry
	plugins []*Entry
	order   []string
	servers map[string][]*Entry
	epoch   uint64
	// shadowed are the names of each server that lost a collision in the
	// current snapshot.
	shadowed map[string]map[string]bool

	current atomic.Pointer[Snapshot]
}

// NewStore starts a catalog holding the natives and no proxied tools.
// serverOrder is the config order of the servers; tools of servers not in
// it are placed after them, in the order they first arrive.
func NewStore(natives []*Entry, serverOrder []string) *Store {
	s := &Store{natives: natives, order: slices.Clone(serverOrder), servers: map[string][]*Entry{}}
	s.publishLocked()
	return s
}

// Snapshot returns the current catalog.
func (s *Store) Snapshot() *Snapshot { return s.current.Load() }

// SetServerTools replaces the tools of one server (nil removes them) and
// publishes the result. Collisions are resolved by catalog order: natives,
// then servers in config order; the first registration of a name wins.
func (s *Store) SetServerTools(server string, tools []*mcp.Tool) Registration {
	return s.SetServerEntries(server, ProxyEntries(server, tools))
}

// ProxyEntries builds the entries of a server's tools. nil tools give nil
// entries.
func ProxyEntries(server string, tools []*mcp.Tool) []*Entry {
	return PrefixedEntries(server, server+"_", tools)
}

// PrefixedEntries is ProxyEntries for a server whose names start with
// prefix (config.Server.NamePrefix) instead of "<server>_".
func PrefixedEntries(server, prefix string, tools []*mcp.Tool) []*Entry {
	if tools == nil {
		return nil
	}
	entries := make([]*Entry, 0, len(tools))
	for _, t := range tools {
		entries = append(entries, newProxyEntry(server, prefix, t))
	}
	return entries
}

// Hold quarantines the entries whose child tool names held maps to why
// pinning holds them (Entry.Quarantine). It is for entries not yet
// published.
func Hold(entries []*Entry, held map[string]string) {
	for _, e := range entries {
		e.Quarantine = held[e.Original]
	}
}

// DeclareTasks sets the task support of the entries whose child tool
// names support maps (a server's "tasks" in mcp.config.json). It is for
// entries not yet published.
func DeclareTasks(entries []*Entry, support map[string]string) {
	for _, e := range entries {
		e.TaskSupport = support[e.Original]
	}
}

// SetServerEntries is SetServerTools for entries already built.
func (s *Store) SetServerEntries(server string, entries []*Entry) Registration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.order, server) {
		s.order = append(s.order, server)
	}
	if entries == nil {
		delete(s.servers, server)
	} else {
		s.servers[server] = entries
	}
	before := s.shadowed
	snap := s.publishLocked()
	var reg Registration
	for _, e := range entries {
		if winner := snap.byName[e.Name]; winner == e {
			reg.Registered++
		} else {
			reg.Skipped = append(reg.Skipped, e.Name)
		}
	}
	for other, names := range s.shadowed {
		if other == server {
			continue
		}
		for _, e := range s.servers[other] {
			if names[e.Name] && !before[other][e.Name] {
				if reg.Displaced == nil {
					reg.Displaced = map[string][]string{}
				}
				reg.Displaced[other] = append(reg.Displaced[other], e.Name)
			}
		}
	}
	return reg
}

// SetServers follows a reload of the configuration: order becomes the
// config order of the servers, and the tools of the servers in drop leave
// the catalog, in one published snapshot.
func (s *Store) SetServers(order []string, drop []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.order = slices.Clone(order)
	for _, id := range drop {
		delete(s.servers, id)
	}
	s.publishLocked()
}

// SetNatives replaces the native tools, listed first. The composition
// root publishes them once every manager has bound its handlers, so the
// store can exist (and be handed to managers) before that.
func (s *Store) SetNatives(entries []*Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.natives = entries
	s.publishLocked()
}

// SetPlugins replaces the plugin tools, listed right after the natives.
func (s *Store) SetPlugins(entries []*Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.plugins = entries
	s.publishLocked()
}

func (s *Store) publishLocked() *Snapshot {
	s.epoch++
	snap := &Snapshot{Epoch: s.epoch, byName: map[string]*Entry{}, superseded: make(chan struct{})}
	add := func(e *Entry) {
		if _, taken := snap.byName[e.Name]; taken {
			return
		}
		snap.byName[e.Name] = e
		snap.Entries = append(snap.Entries, e)
	}
	for _, e := range s.natives {
		add(e)
	}
	for _, e := range s.plugins {
		add(e)
	}
	s.shadowed = map[string]map[string]bool{}
	for _, id := range s.order {
		for _, e := range s.servers[id] {
			if _, taken := snap.byName[e.Name]; taken {
				if s.shadowed[id] == nil {
					s.shadowed[id] = map[string]bool{}
				}
				s.shadowed[id][e.Name] = true
			}
			add(e)
		}
	}
	if old := s.current.Swap(snap); old != nil {
		close(old.superseded)
	}
	return snap
}

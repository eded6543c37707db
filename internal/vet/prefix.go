package vet

import (
	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/manifest"
	"github.com/evokore/evokore/internal/native"
)

// CodePrefixCollision is a server's prefix option making two sources
// publish the same name: two servers with one prefix, or a server without
// a prefix serving a name a native tool or another server already has.
const CodePrefixCollision = "prefix-collision"

// CodeLongName is a child tool whose "<prefix><tool>" is longer than
// clients accept: it is listed under a shortened name, which vet shows.
const CodeLongName = "long-name"

// prefixes reports the collisions a server's prefix option causes. A
// server that keeps the default prefix (its id) cannot collide by prefix:
// ids are unique. Sharing a prefix is always an error, because the
// servers' tools and prompts would shadow each other depending on which
// boots first; so is an unprefixed name that a native tool or a known
// tool of another server already has (known from the manifest cache, or
// from a live boot when that ran first).
func (c *checker) prefixes(home string) {
	byPrefix := map[string]string{}
	for _, s := range c.cfg.Servers {
		if s.Disabled || s.Invalid != "" {
			continue
		}
		p := s.NamePrefix()
		if p == "" {
			continue
		}
		if first, ok := byPrefix[p]; ok && s.Prefix != nil {
			c.report(config.SeverityError, c.prefixPos(s), CodePrefixCollision,
				"server '%s' uses the prefix '%s' of server '%s': their tool and prompt names would collide", s.ID, p[:len(p)-1], first)
			continue
		}
		if first, ok := byPrefix[p]; ok {
			other, _ := c.cfg.Server(first)
			c.report(config.SeverityError, c.prefixPos(*other), CodePrefixCollision,
				"server '%s' uses the prefix '%s' of server '%s': their tool and prompt names would collide", first, p[:len(p)-1], s.ID)
			continue
		}
		byPrefix[p] = s.ID
	}

	known := c.knownTools(home)
	for _, s := range c.cfg.Servers {
		if s.Disabled || s.Invalid != "" {
			continue
		}
		for _, name := range known[s.ID] {
			if public := s.PublicName(name); len(public) > catalog.MaxToolName {
				c.report(config.SeverityWarning, c.cfg.KeyPos(s.Path()...), CodeLongName,
					"server '%s' serves '%s' (%d characters; clients accept %d): it is listed and called as '%s'",
					s.ID, public, len(public), catalog.MaxToolName, catalog.ShortName(public))
			}
		}
	}
	for _, s := range c.cfg.Servers {
		if s.Disabled || s.Invalid != "" || s.Prefix == nil {
			continue
		}
		for _, name := range known[s.ID] {
			public := s.PublicName(name)
			if _, ok := native.Lookup(public); ok {
				c.report(config.SeverityError, c.prefixPos(s), CodePrefixCollision,
					"server '%s' with prefix %q serves '%s', the name of a native tool", s.ID, *s.Prefix, public)
				continue
			}
			for _, o := range c.cfg.Servers {
				if o.ID == s.ID || o.Disabled || o.Invalid != "" {
					continue
				}
				for _, on := range known[o.ID] {
					if o.PublicName(on) == public {
						c.report(config.SeverityError, c.prefixPos(s), CodePrefixCollision,
							"server '%s' with prefix %q serves '%s', which server '%s' serves too", s.ID, *s.Prefix, public, o.ID)
					}
				}
			}
		}
	}
}

// prefixPos is where a server's prefix is written, else the server.
func (c *checker) prefixPos(s config.Server) config.Position {
	return c.cfg.KeyPos(append(s.Path(), "prefix")...)
}

// knownTools are the child tool names each server is known to serve.
func (c *checker) knownTools(home string) map[string][]string {
	out := map[string][]string{}
	if home == "" {
		return out
	}
	for id, tools := range manifest.Cached(home, c.cfg.Servers) {
		for _, t := range tools {
			out[id] = append(out[id], t.Name)
		}
	}
	return out
}

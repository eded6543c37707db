package skilltools

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native"
)

// RegistryEntry is one skill a registry index offers. An index is a JSON
// array of entries or an object with a "skills" array; url may be
// relative to the registry's baseUrl.
type RegistryEntry struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Version     string     `json:"version"`
	Author      string     `json:"author"`
	Category    string     `json:"category"`
	Tags        stringList `json:"tags"`
	URL         string     `json:"url"`
	Checksum    string     `json:"checksum"`
}

// stringList accepts a string or a list of strings.
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*l = stringList{s}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*l = list
	return nil
}

func parseRegistryIndex(b []byte) ([]RegistryEntry, error) {
	var list []RegistryEntry
	if err := json.Unmarshal(b, &list); err == nil {
		return list, nil
	}
	var obj struct {
		Skills []RegistryEntry `json:"skills"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, fmt.Errorf("the index is not JSON of the form [{name, url, ...}] or {\"skills\": [...]}: %v", err)
	}
	return obj.Skills, nil
}

// resolveURL makes ref absolute against base.
func resolveURL(base, ref string) (string, error) {
	b, err := url.Parse(strings.TrimSpace(base))
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(b.Path, "/") {
		b.Path += "/"
	}
	r, err := url.Parse(strings.TrimSpace(ref))
	if err != nil {
		return "", err
	}
	return b.ResolveReference(r).String(), nil
}

// registryScore ranks an entry for a query: every query word must appear
// in the name, tags or description; the name counts most.
func registryScore(e RegistryEntry, query string) int {
	words := strings.Fields(strings.ToLower(query))
	if len(words) == 0 {
		return 1
	}
	name, desc := strings.ToLower(e.Name), strings.ToLower(e.Description)
	tags := strings.ToLower(strings.Join(e.Tags, " "))
	score := 0
	for _, w := range words {
		s := 0
		if strings.Contains(name, w) {
			s += 3
		}
		if strings.Contains(tags, w) {
			s += 2
		}
		if strings.Contains(desc, w) {
			s++
		}
		if s == 0 {
			return 0
		}
		score += s
	}
	return score
}

func (t *Tools) listRegistry(ctx context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		Registry string `json:"registry"`
		Query    string `json:"query"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	var regs []config.SkillRegistry
	if t.host.Config != nil {
		regs = t.host.Config().SkillRegistries
	}
	if len(regs) == 0 {
		return native.Text(`No skill registries configured. Add them to mcp.config.json as "skillRegistries": [{"name": "...", "baseUrl": "https://...", "index": "index.json"}].`), nil
	}
	if name := strings.TrimSpace(in.Registry); name != "" {
		picked := pickRegistries(regs, name)
		if len(picked) == 0 {
			return native.Errorf("No skill registry named '%s'. Configured: %s.", name, strings.Join(registryNames(regs), ", ")), nil
		}
		regs = picked
	}
	var b strings.Builder
	var failures []string
	total := 0
	for _, r := range regs {
		entries, err := t.readRegistry(ctx, r)
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", r.Name, err))
			continue
		}
		hits := matchingEntries(entries, in.Query)
		fmt.Fprintf(&b, "Registry %s (%d of %d skills):\n", r.Name, len(hits), len(entries))
		for _, e := range hits {
			writeRegistryEntry(&b, r.BaseURL, e)
		}
		total += len(hits)
	}
	if total > 0 {
		b.WriteString("\nInstall one with fetch_skill (url, and checksum when the registry lists one).\n")
	}
	if len(failures) > 0 {
		b.WriteString("\nRegistry errors:\n")
		for _, f := range failures {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	res := native.Text("%s", strings.TrimRight(b.String(), "\n"))
	res.IsError = total == 0 && len(failures) == len(regs)
	return res, nil
}

// pickRegistries returns the registries called name, in any case.
func pickRegistries(regs []config.SkillRegistry, name string) []config.SkillRegistry {
	var picked []config.SkillRegistry
	for _, r := range regs {
		if strings.EqualFold(r.Name, name) {
			picked = append(picked, r)
		}
	}
	return picked
}

func registryNames(regs []config.SkillRegistry) []string {
	var names []string
	for _, r := range regs {
		names = append(names, r.Name)
	}
	return names
}

// readRegistry downloads and parses a registry's index.
func (t *Tools) readRegistry(ctx context.Context, r config.SkillRegistry) ([]RegistryEntry, error) {
	indexURL, err := resolveURL(r.BaseURL, r.Index)
	if err != nil {
		return nil, fmt.Errorf("bad index URL: %w", err)
	}
	body, err := t.download(ctx, indexURL)
	if err != nil {
		return nil, err
	}
	return parseRegistryIndex(body)
}

// matchingEntries are the named entries query matches, best first, then
// by name.
func matchingEntries(entries []RegistryEntry, query string) []RegistryEntry {
	type scored struct {
		e RegistryEntry
		s int
	}
	var hits []scored
	for _, e := range entries {
		if s := registryScore(e, query); s > 0 && strings.TrimSpace(e.Name) != "" {
			hits = append(hits, scored{e, s})
		}
	}
	slices.SortStableFunc(hits, func(a, b scored) int { return cmp.Or(cmp.Compare(b.s, a.s), cmp.Compare(a.e.Name, b.e.Name)) })
	out := make([]RegistryEntry, len(hits))
	for i, h := range hits {
		out[i] = h.e
	}
	return out
}

// writeRegistryEntry writes one entry: name, version, author, tags,
// description, whether a checksum is listed; then its URL, resolved
// against the registry's base, with the checksum.
func writeRegistryEntry(b *strings.Builder, baseURL string, e RegistryEntry) {
	line := "- **" + e.Name + "**"
	if e.Version != "" {
		line += " (v" + strings.TrimPrefix(e.Version, "v") + ")"
	}
	if e.Author != "" {
		line += " by " + e.Author
	}
	if len(e.Tags) > 0 {
		line += " [" + strings.Join(e.Tags, ", ") + "]"
	}
	line += ": " + e.Description
	if e.Checksum != "" {
		line += " (checksum available)"
	}
	b.WriteString(line + "\n")
	if e.URL == "" {
		return
	}
	if abs, err := resolveURL(baseURL, e.URL); err == nil {
		fmt.Fprintf(b, "  %s", abs)
		if e.Checksum != "" {
			fmt.Fprintf(b, " sha256:%s", e.Checksum)
		}
		b.WriteString("\n")
	}
}

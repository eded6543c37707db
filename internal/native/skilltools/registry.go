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
		var names []string
		var picked []config.SkillRegistry
		for _, r := range regs {
			names = append(names, r.Name)
			if strings.EqualFold(r.Name, name) {
				picked = append(picked, r)
			}
		}
		if len(picked) == 0 {
			return native.Errorf("No skill registry named '%s'. Configured: %s.", name, strings.Join(names, ", ")), nil
		}
		regs = picked
	}
	var b strings.Builder
	var failures []string
	total := 0
	for _, r := range regs {
		indexURL, err := resolveURL(r.BaseURL, r.Index)
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s: bad index URL: %v", r.Name, err))
			continue
		}
		body, err := t.download(ctx, indexURL)
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", r.Name, err))
			continue
		}
		entries, err := parseRegistryIndex(body)
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", r.Name, err))
			continue
		}
		type scored struct {
			e RegistryEntry
			s int
		}
		var hits []scored
		for _, e := range entries {
			if s := registryScore(e, in.Query); s > 0 && strings.TrimSpace(e.Name) != "" {
				hits = append(hits, scored{e, s})
			}
		}
		slices.SortStableFunc(hits, func(a, b scored) int { return cmp.Or(cmp.Compare(b.s, a.s), cmp.Compare(a.e.Name, b.e.Name)) })
		fmt.Fprintf(&b, "Registry %s (%d of %d skills):\n", r.Name, len(hits), len(entries))
		for _, h := range hits {
			e := h.e
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
			if e.URL != "" {
				if abs, err := resolveURL(r.BaseURL, e.URL); err == nil {
					fmt.Fprintf(&b, "  %s", abs)
					if e.Checksum != "" {
						fmt.Fprintf(&b, " sha256:%s", e.Checksum)
					}
					b.WriteString("\n")
				}
			}
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

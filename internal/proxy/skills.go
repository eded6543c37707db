package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/skills"
)

// A child that declares the Skills Extension (SEP-2640) has its skills
// listed with skills/list when it connects and whenever it announces a
// resource list change. They are served under the server's prefix, as a
// path segment: the child's skill://git-workflow/SKILL.md is the router's
// skill://<prefix>/git-workflow/SKILL.md, and a read of it (or of a file
// its manifest lists, and of nothing else) goes to the child under its
// own URI. A skill's name as roles, profiles and search know it is the
// child's, prefixed like a tool's: <prefix>_git-workflow.
//
// What a child lists is hostile input: an entry that breaks the
// extension's rules (a URI that is not skill://…/<name>/SKILL.md, a
// manifest without SKILL.md, a file outside the skill, a malformed
// digest) is left out and logged, and so is a dynamic skill, whose
// content no digest binds. Like a tool definition, a skill is pinned:
// the digests of its files as first seen; a child that serves another
// set under the same URI has that skill held (Held) until an operator
// accepts it (`evokore pins accept`).

// Bounds on what one child's skills/list may return.
const (
	maxChildSkills     = 10000
	maxChildSkillPages = 1000
)

// SkillPinner pins child skills by the digests of their files; the
// Pinner given in Options may implement it.
type SkillPinner interface {
	// CheckSkills returns the model-visible text of each skill it holds,
	// keyed by the child's SKILL.md URI, and a store problem to log.
	CheckSkills(server config.Server, skills []skills.Pinned) (held map[string]string, problem string)
}

// ChildSkill is a child's skill as the router serves it.
type ChildSkill struct {
	Server string
	// Name is the name roles and profiles give it: the child's name with
	// the server's prefix.
	Name string
	// Entry carries the router's URIs; ChildURI is the child's SKILL.md.
	Entry    *skills.Entry
	ChildURI string
	// Held is why the skill is held (its files changed since they were
	// pinned), "" when it is served.
	Held string
	// Execute says the server's config lets execute_skill run it.
	Execute bool
}

// childSkill is one skill as the child listed it.
type childSkill struct {
	entry *skills.Entry
	held  string
}

// The wire shapes of skills/list and skills/get toward a child.
type (
	listSkillsParams struct {
		mcp.ParamsBase
		Cursor string `json:"cursor,omitempty"`
	}
	listSkillsResult struct {
		mcp.ResultBase
		Skills     []json.RawMessage `json:"skills"`
		NextCursor string            `json:"nextCursor,omitempty"`
	}
)

// registerSkillMethods lets a child client send skills/list.
func registerSkillMethods(c *mcp.Client) {
	_ = mcp.AddSendingCustomMethod[*listSkillsParams, *listSkillsResult](c, "skills/list")
}

// offersSkills reports whether a child declared the extension.
func offersSkills(caps *mcp.ServerCapabilities) bool {
	if caps == nil || caps.Extensions == nil {
		return false
	}
	_, ok := caps.Extensions[skills.ExtensionID]
	return ok
}

// listChildSkills lists a child's skills, page by page, keeping the
// entries that keep the extension's rules and pinning them.
func (s *Supervisor) listChildSkills(ctx context.Context, c *child, cs *mcp.ClientSession) ([]childSkill, []string) {
	var out []childSkill
	var problems []string
	seen := map[string]bool{}
	cursor := ""
	for page := 0; page < maxChildSkillPages; page++ {
		res, err := mcp.CallCustomMethod[*listSkillsParams, *listSkillsResult](ctx, cs, "skills/list", &listSkillsParams{Cursor: cursor})
		if err != nil {
			return out, append(problems, "skills/list: "+err.Error())
		}
		for _, raw := range res.Skills {
			e, err := childEntry(raw)
			if err == nil && seen[e.URI] {
				err = fmt.Errorf("%s is listed twice", e.URI)
			}
			if err != nil {
				problems = append(problems, "a skill is left out: "+err.Error())
				continue
			}
			seen[e.URI] = true
			out = append(out, childSkill{entry: e})
			if len(out) >= maxChildSkills {
				return out, append(problems, fmt.Sprintf("skills past the first %d are left out", maxChildSkills))
			}
		}
		if res.NextCursor == "" || res.NextCursor == cursor {
			break
		}
		cursor = res.NextCursor
	}
	if p, ok := s.opts.Pins.(SkillPinner); ok && c.spec.PinningEnabled() && len(out) > 0 {
		pins := make([]skills.Pinned, len(out))
		for i, sk := range out {
			pins[i] = skills.Pinned{URI: sk.entry.URI, Name: sk.entry.Name(), Hash: skills.ManifestHash(sk.entry.Resources), Files: sk.entry.Resources}
		}
		held, problem := p.CheckSkills(c.spec, pins)
		if problem != "" {
			s.log.Info("[EVOKORE] " + problem)
		}
		for i := range out {
			out[i].held = held[out[i].entry.URI]
		}
	}
	return out, problems
}

var digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// childEntry decodes and checks one entry of a child's listing.
func childEntry(raw json.RawMessage) (*skills.Entry, error) {
	var w struct {
		URI         string          `json:"uri"`
		Frontmatter json.RawMessage `json:"frontmatter"`
		Resources   json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("an entry does not decode: %w", err)
	}
	root, name, err := skillRoot(w.URI)
	if err != nil {
		return nil, err
	}
	var fm struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if json.Unmarshal(w.Frontmatter, &fm) != nil || fm.Name != name || fm.Description == "" {
		return nil, fmt.Errorf("%s: its frontmatter must name it %q and describe it", w.URI, name)
	}
	var files []skills.File
	if err := json.Unmarshal(w.Resources, &files); err != nil {
		return nil, fmt.Errorf("%s: a dynamic skill or one without a manifest has no digest to pin", w.URI)
	}
	hasRoot := false
	for _, f := range files {
		switch {
		case f.URI == w.URI:
			hasRoot = true
		case !strings.HasPrefix(f.URI, root+"/") || strings.Contains(f.URI, "/../") || strings.HasSuffix(f.URI, "/"):
			return nil, fmt.Errorf("%s: the file %s is not the skill's", w.URI, f.URI)
		}
		if !digestPattern.MatchString(f.Digest) || f.Size < 0 {
			return nil, fmt.Errorf("%s: the file %s has no valid digest and size", w.URI, f.URI)
		}
	}
	if !hasRoot {
		return nil, fmt.Errorf("%s: its manifest does not list its SKILL.md", w.URI)
	}
	return &skills.Entry{URI: w.URI, Frontmatter: w.Frontmatter, Resources: files}, nil
}

// skillRoot checks a skill URI (skill://<path>/<name>/SKILL.md) and
// returns its root (the URI without /SKILL.md) and name.
func skillRoot(uri string) (root, name string, err error) {
	u, perr := url.Parse(uri)
	if perr != nil || u.Scheme != "skill" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" ||
		!strings.HasSuffix(uri, "/"+skills.SkillFile) || strings.Contains(uri, "/../") || strings.Contains(uri, "/./") {
		return "", "", fmt.Errorf("%q is not a skill:// URI of a SKILL.md", uri)
	}
	root = strings.TrimSuffix(uri, "/"+skills.SkillFile)
	name = root[strings.LastIndexByte(root, '/')+1:]
	if err := skills.ValidName(name); err != nil {
		return "", "", fmt.Errorf("%s: %w", uri, err)
	}
	return root, name, nil
}

// routerURI is a child's skill URI as the router serves it.
func routerURI(prefix, childURI string) string {
	if prefix == "" {
		return childURI
	}
	return skills.URIScheme + prefix + "/" + strings.TrimPrefix(childURI, skills.URIScheme)
}

// skillPrefix is the path segment a server's skills are served under.
func skillPrefix(spec *config.Server) string { return strings.TrimSuffix(spec.NamePrefix(), "_") }

// Skills lists the children's skills in config order, held ones
// included (with Held set); a URI an earlier server serves is left out.
func (s *Supervisor) Skills() []ChildSkill {
	s.content.mu.Lock()
	defer s.content.mu.Unlock()
	var out []ChildSkill
	seen := map[string]bool{}
	for _, c := range s.children() {
		cc := s.content.by[c.spec.ID]
		if cc == nil {
			continue
		}
		prefix := skillPrefix(&c.spec)
		for _, sk := range cc.skills {
			e := &skills.Entry{URI: routerURI(prefix, sk.entry.URI), Frontmatter: sk.entry.Frontmatter, Resources: make([]skills.File, len(sk.entry.Resources))}
			for i, f := range sk.entry.Resources {
				f.URI = routerURI(prefix, f.URI)
				e.Resources[i] = f
			}
			if seen[e.URI] {
				continue
			}
			seen[e.URI] = true
			out = append(out, ChildSkill{Server: c.spec.ID, Name: c.spec.PublicName(sk.entry.Name()), Entry: e,
				ChildURI: sk.entry.URI, Held: sk.held, Execute: c.spec.ExecuteSkills})
		}
	}
	return out
}

// SkillFile finds the child skill whose manifest lists uri (a router URI)
// and the child's own URI of that file.
func SkillFile(list []ChildSkill, uri string) (sk ChildSkill, childURI, digest string, ok bool) {
	for _, sk := range list {
		root := strings.TrimSuffix(sk.Entry.URI, skills.SkillFile)
		if !strings.HasPrefix(uri, root) {
			continue
		}
		childRoot := strings.TrimSuffix(sk.ChildURI, skills.SkillFile)
		for _, f := range sk.Entry.Resources {
			if f.URI == uri {
				return sk, childRoot + strings.TrimPrefix(uri, root), f.Digest, true
			}
		}
	}
	return ChildSkill{}, "", "", false
}

// hasSkills reports whether a child listed any skill.
func (s *Supervisor) hasSkills(id string) bool {
	s.content.mu.Lock()
	defer s.content.mu.Unlock()
	cc := s.content.by[id]
	return cc != nil && len(cc.skills) > 0
}

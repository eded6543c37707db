// Package skilltools serves the native tools of the skill library:
// resolve_workflow, search_skills, get_skill_help, refresh_skills,
// fetch_skill, list_registry, execute_skill, skill_creator and
// docs_architect. The library itself (index, search, dependencies,
// watcher) is internal/skills; this package turns it into tool results.
//
// Every failure a model can act on is an isError result that says what
// happened; no tool reports success for work it did not do.
//
// Decisions worth knowing:
//
//   - fetch_skill and list_registry download through one client: http and
//     https only, at most 5 redirects, 1 MB, 30 s. The address check runs
//     in the dialer on the address DNS returned, for every hop, so names
//     that resolve to loopback, private, link-local, CGNAT or unspecified
//     addresses are refused unless EVOKORE_HTTP_ALLOW_PRIVATE=true;
//     environment proxies are not used. Names and categories are
//     sanitised and must stay single directory names inside the skills
//     directory (symbolic links included).
//   - execute_skill runs a fenced block (bash, sh, python, js; ts with
//     tsx) in a container when docker or podman answers `info` (no
//     network, read-only root, dropped capabilities, memory, CPU and
//     process limits), else through the launcher (package procgroup) in
//     the router's working directory, with the launcher's base allowlist
//     of the router's environment; the model's env may set only SKILL_*
//     names. The timeout (30 s, or EVOKORE_SANDBOX_TIMEOUT_MS) and the
//     1 MB output cap kill the whole tree, and the tree is killed after
//     every run so nothing outlives it, setsid helpers included. Next steps travel in the result's _meta ("nextSteps") and as
//     text; in dynamic discovery mode the tools the skill and its next
//     steps name (frontmatter tools or allowed-tools) are activated for
//     the session.
//   - skill_creator writes through the filesystem child "fs"
//     (fs_create_directory, fs_write_file) when one is configured, so the
//     router's permissions and approvals apply, and otherwise directly
//     inside the skills directory. docs_architect reads the project's
//     manifests through fs_read_text_file (or fs_read_file) when "fs" is
//     configured, else from disk; a refused read is reported as such and
//     never embedded as project content.
package skilltools

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/search"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/skills"
)

// Texts clients or scripts match on.
const (
	noSearchResults = "No skills found matching that query."
	// noSearchWhy follows noSearchResults when the search abstained.
	noSearchWhy = "Why nothing matched: %s."
	// slowSearch is when a search is logged as slow.
	slowSearch = 250 * time.Millisecond
	// searchLimit is how many matches search_skills lists by default, and
	// maxSearchLimit the most a caller may ask for.
	searchLimit    = 15
	maxSearchLimit = 50
	// workflowLimit is how many skills resolve_workflow injects;
	// workflowCandidates how many it records in the telemetry.
	workflowLimit      = 3
	workflowCandidates = 5
)

// Options are the settings the skill tools use.
type Options struct {
	// Dir is the skills directory; Watch re-indexes it on changes.
	Dir   string
	Watch bool
	// Home is EVOKORE_HOME (routing telemetry).
	Home string
	// Env is the environment the sandbox's allowlist draws from.
	Env config.Env
	// AllowPrivate lets fetch_skill reach private addresses.
	AllowPrivate bool
	// DiscoveryMode decides whether execute_skill activates tools.
	DiscoveryMode string
	// Visible, when set, reports whether a session's role and profile let
	// it see a skill known by names (its name, its category/name): what
	// search_skills and resolve_workflow answer holds only those, as
	// skills/list does.
	Visible func(sess *session.Session, names ...string) bool
}

// Tools holds what the skill tools share.
type Tools struct {
	host    *native.Host
	opts    Options
	lib     *skills.Library
	sandbox *sandbox
}

// Register prepares the skill library named by the settings and binds the
// skill tools. The caller serves the returned library's resources, calls
// Start (which indexes it and starts its watcher when
// EVOKORE_SKILL_WATCHER=true) and closes it at shutdown.
func Register(t *native.Table, host *native.Host, o Options) *Library {
	lib := skills.New(o.Dir, host.Log)
	tools := &Tools{host: host, opts: o, lib: lib, sandbox: newSandbox(o.Env, host.Log)}
	t.Bind(native.ResolveWorkflow, tools.resolveWorkflow)
	t.Bind(native.SearchSkills, tools.searchSkills)
	t.Bind(native.GetSkillHelp, tools.getSkillHelp)
	t.Bind(native.RefreshSkills, tools.refreshSkills)
	t.Bind(native.FetchSkill, tools.fetchSkill)
	t.Bind(native.ListRegistry, tools.listRegistry)
	t.Bind(native.ExecuteSkill, tools.executeSkill)
	t.Bind(native.SkillCreator, tools.skillCreator)
	t.Bind(native.DocsArchitect, tools.docsArchitect)
	return &Library{Library: lib, Tools: tools, watch: o.Watch, log: host.Log}
}

// Library is the skill library as the composition root runs it.
type Library struct {
	*skills.Library
	// Tools are the bound skill tools, for the approval binding of
	// execute_skill.
	Tools *Tools
	watch bool
	log   *slog.Logger
}

// Start indexes the library in the background and starts its watcher
// when EVOKORE_SKILL_WATCHER=true.
func (l *Library) Start() {
	l.Library.Start()
	if l.watch {
		if err := l.Watch(skills.DefaultDebounce); err != nil {
			l.log.Info("[EVOKORE] Cannot watch the skills directory", "err", err)
		}
	}
}

func (t *Tools) resolveWorkflow(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		Objective string `json:"objective"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	ix := t.lib.Index()
	matches := t.visible(call.Session, ix.Search(in.Objective, workflowCandidates))
	if err := skills.RecordRouting(t.opts.Home, in.Objective, matches); err != nil {
		t.host.Log.Info("[EVOKORE] Cannot record routing telemetry", "err", err)
	}
	if len(matches) > workflowLimit {
		matches = matches[:workflowLimit]
	}
	return native.Text("%s", ix.WorkflowText(in.Objective, matches, skills.WorkflowOptions{Wrap: true})), nil
}

// visible keeps the matches sess may see.
func (t *Tools) visible(sess *session.Session, matches []skills.Match) []skills.Match {
	if t.opts.Visible == nil || sess == nil {
		return matches
	}
	kept := matches[:0:0]
	for _, m := range matches {
		if t.opts.Visible(sess, m.Skill.Name, m.Skill.Key) {
			kept = append(kept, m)
		}
	}
	return kept
}

func (t *Tools) searchSkills(ctx context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		Query   string   `json:"query"`
		Limit   *float64 `json:"limit"`
		Explain bool     `json:"explain"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	limit := searchLimit
	if in.Limit != nil && !math.IsNaN(*in.Limit) {
		limit = int(min(max(math.Floor(*in.Limit), 1), maxSearchLimit))
	}
	start := time.Now()
	// Skills the caller may not see are taken out before ranking, so
	// they neither show nor take a place; what is left is cut to limit.
	pool := limit
	if t.host.Semantic != nil || t.opts.Visible != nil {
		pool = limit * semanticPool
	}
	found := t.lib.Index().Find(strings.ToLower(in.Query), pool)
	matches := t.visible(call.Session, found.Matches)
	if sem := t.host.Semantic; sem != nil {
		matches = rerankSkills(ctx, sem, in.Query, matches, limit)
	} else if len(matches) > limit {
		matches = matches[:limit]
	}
	if d := time.Since(start); d > slowSearch {
		t.host.Log.Info("[EVOKORE] Slow skill search", "took", d.Round(time.Millisecond), "query", in.Query)
	}
	if len(matches) == 0 {
		if found.Why == "" || len(found.Matches) > 0 {
			return native.Text(noSearchResults), nil
		}
		return native.Text(noSearchResults+"\n"+noSearchWhy, found.Why), nil
	}
	lines := make([]string, len(matches))
	for i, m := range matches {
		lines[i] = skills.SearchLine(m)
		if in.Explain {
			lines[i] += "\n  why: " + m.Signals()
		}
	}
	return native.Text("%s", strings.Join(lines, "\n")), nil
}

func (t *Tools) getSkillHelp(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		Name string `json:"skill_name"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	ix := t.lib.Index()
	name := strings.TrimSpace(in.Name)
	s := ix.Resolve(name)
	note := ""
	if s == nil {
		if s = ix.Lookup(name); s != nil {
			note = fmt.Sprintf("No skill is named '%s'; showing the closest match, '%s'.\n\n", strings.ToLower(name), s.Name)
		}
	}
	if s == nil {
		return native.Text("Could not find a skill named '%s'.", strings.ToLower(name)), nil
	}
	return native.Text("%s%s", note, ix.HelpMarkdown(s)), nil
}

func (t *Tools) refreshSkills(_ context.Context, _ *native.Call) (*mcp.CallToolResult, error) {
	r := t.lib.Refresh()
	text := fmt.Sprintf("Skills refreshed in %dms: %d added, %d removed, %d unchanged/updated, %d total skills indexed.",
		r.Took.Milliseconds(), r.Added, r.Removed, r.Kept, r.Total)
	if n := len(r.Index.Diagnostics); n > 0 {
		text += fmt.Sprintf("\n%d problem(s) found while indexing (malformed files are skipped):", n)
		for i, d := range r.Index.Diagnostics {
			if i == 10 {
				text += fmt.Sprintf("\n... and %d more; run `evokore vet --skills %s`", n-10, t.lib.Dir())
				break
			}
			text += "\n- " + d.String()
		}
	}
	return native.Text("%s", text), nil
}

// semanticPool is how many lexical candidates per result semantic
// reranking considers.
const semanticPool = 3

// rerankSkills reorders the relevance matches (aliases and name prefixes
// stay first) by fusing their lexical rank with their similarity to the
// query, and keeps limit of them.
func rerankSkills(ctx context.Context, sem *search.Semantic, q string, ms []skills.Match, limit int) []skills.Match {
	head := 0
	for head < len(ms) && ms[head].Tier < skills.TierRelevance {
		head++
	}
	rest := ms[head:]
	docs := make([]search.SemanticDoc, len(rest))
	for i, m := range rest {
		docs[i] = search.SemanticDoc{Text: m.Skill.Name + "\n" + m.Skill.Description + "\n" + strings.Join(m.Skill.Tags, ", ")}
	}
	out := slices.Clone(ms[:head])
	for _, i := range sem.Rerank(ctx, q, docs) {
		out = append(out, rest[i])
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

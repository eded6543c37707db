package routing

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/search"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/status"
)

// Projection says what a session lists.
type Projection interface {
	Snapshot() *catalog.Snapshot
	// Legacy reports whether every tool is listed anyway.
	Legacy() bool
	// Listed reports whether sess lists e right now.
	Listed(sess *session.Session, e *catalog.Entry) bool
}

// Discovery texts; clients and scripts written for EVOKORE-MCP match them.
const (
	discoverEmpty = "Please provide a non-empty discovery query."
	discoverNone  = "[EVOKORE TOOL DISCOVERY] No tools matched '%s'. Hidden proxied tools remain callable by exact name even when they are not listed."
	// discoverWhy follows discoverNone when the search abstained, saying
	// why (no tool has the words, or none covers enough of the query).
	discoverWhy = "Why nothing matched: %s."
)

// RegisterDiscovery binds discover_tools. sem, when not nil, reranks the
// lexical matches with embeddings.
func RegisterDiscovery(t *native.Table, p Projection, sem *search.Semantic) {
	t.Bind(native.DiscoverTools, discoverTools(p, sem))
}

// semanticPool is how many lexical candidates per result semantic
// reranking considers.
const semanticPool = 3

// discoverIn is discover_tools' arguments.
type discoverIn struct {
	Query string          `json:"query"`
	Limit json.RawMessage `json:"limit"`
	// Explain is true, or a tool's name: also say why that tool is not a
	// result.
	Explain any `json:"explain"`
}

func discoverTools(p Projection, sem *search.Semantic) native.Handler {
	return func(ctx context.Context, call *native.Call) (*mcp.CallToolResult, error) {
		var in discoverIn
		if err := call.Decode(&in); err != nil {
			return call.Invalid(err), nil
		}
		q := strings.TrimSpace(in.Query)
		if q == "" {
			return native.Errorf(discoverEmpty), nil
		}
		limit := min(max(parseLimit(in.Limit), 1), 25)
		whyName, _ := in.Explain.(string)
		whyName = strings.TrimSpace(whyName)
		found := findTools(ctx, p, sem, q, limit, whyName)
		// Right after connecting the children may still be booting: a
		// search that found nothing waits a little for their first boot
		// rather than answer "No tools matched".
		if len(found.Matches) == 0 && notSearchable(p) != "" && waitFirstBoot(ctx, p) {
			found = findTools(ctx, p, sem, q, limit, whyName)
		}
		matches := found.Matches[:min(limit, len(found.Matches))]
		pending := notSearchable(p)
		explain, _ := in.Explain.(bool)
		if whyName != "" {
			explain = true
			pending = "\n" + whyNot(p, call.Session, q, whyName, limit, found.Matches) + pending
		}
		if len(matches) == 0 {
			if found.Why == "" {
				return native.Text("%s", fmt.Sprintf(discoverNone, q)+pending), nil
			}
			return native.Text("%s", fmt.Sprintf(discoverNone+"\n"+discoverWhy, q, found.Why)+pending), nil
		}
		mode, activation := activate(p, call.Session, matches)
		text := listMatches(p, call.Session, q, mode, activation, matches, explain)
		if call.Session.Stateless && mode == "dynamic" {
			res := native.Text("%s", strings.TrimRight(text, "\n")+pending)
			res.Content = append(res.Content, &mcp.TextContent{Text: definitions(matches)})
			return res, nil
		}
		if mode == "dynamic" {
			text += "Re-run tools/list to fetch the updated tool projection."
		}
		return native.Text("%s", strings.TrimRight(text, "\n")+pending), nil
	}
}

// findTools ranks as the model is shown, reranked when sem is set; to say
// why the tool whyName is not a result it ranks every match, so the rank
// it gives comes from the same list.
func findTools(ctx context.Context, p Projection, sem *search.Semantic, q string, limit int, whyName string) catalog.Found {
	snap := p.Snapshot()
	n, pool := limit, limit
	if sem != nil {
		n, pool = limit*semanticPool, limit*semanticPool
	}
	if whyName != "" {
		n = len(snap.Entries)
	}
	found := snap.Find(q, n)
	if sem != nil {
		pool = min(pool, len(found.Matches))
		found.Matches = append(rerankTools(ctx, sem, q, found.Matches[:pool], pool), found.Matches[pool:]...)
	}
	return found
}

// activate makes the matches callable for the session and says so: in
// legacy mode every tool is listed already; a stateless client is
// answered with the definitions; otherwise the hidden matches are
// activated for the session. It returns the mode and the sentence.
func activate(p Projection, sess *session.Session, matches []catalog.Match) (mode, activation string) {
	switch {
	case p.Legacy():
		return "legacy", "Legacy mode lists every tool already; discovery changes nothing."
	case sess.Stateless:
		// A client without a session lists the same tools on every
		// request: discovery answers with the definitions themselves,
		// and the hidden tools are called by exact name.
		return "dynamic", discoverStateless
	}
	var hidden []string
	for _, m := range matches {
		if !p.Listed(sess, m.Entry) {
			hidden = append(hidden, m.Entry.Name)
		}
	}
	added := sess.Activate(hidden...)
	if len(added) == 0 {
		return "dynamic", "No new proxied tools needed activation for this session."
	}
	// EVOKORE-MCP's words when every one is proxied; a native a profile
	// hid is not called proxied.
	kind := "proxied "
	for _, m := range matches {
		if m.Entry.Source != catalog.SourceProxy && slices.Contains(added, m.Entry.Name) {
			kind = ""
		}
	}
	return "dynamic", fmt.Sprintf("Activated %d %stool(s) for this session.", len(added), kind)
}

// listMatches is the answer's header and one line per match: name,
// source, server, whether the session lists it, the first line of its
// description, and with explain why it matched.
func listMatches(p Projection, sess *session.Session, q, mode, activation string, matches []catalog.Match, explain bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[EVOKORE TOOL DISCOVERY] mode=%s\nQuery: %s\nMatched %d tool(s).\n%s\n\n", mode, q, len(matches), activation)
	for _, m := range matches {
		e := m.Entry
		state := "callable-by-exact-name"
		if p.Listed(sess, e) {
			state = "visible"
		}
		server := ""
		if e.Server != "" {
			server = ", server=" + e.Server
		}
		desc := e.Tool.Description
		if desc == "" {
			desc = "No description provided."
		}
		fmt.Fprintf(&b, "- %s [%s%s, %s]: %s\n", e.Name, e.Source, server, state, firstLine(desc))
		if explain {
			fmt.Fprintf(&b, "  why: %s\n", m.Signals())
		}
	}
	return b.String()
}

// RoleNotes is what a Projection may also tell: what a session's role
// lets a call of a tool do ("" for a plain allow), for explain: "<tool
// name>". A note, not the policy's level: what only reports on tools
// stays apart from the policy and the launcher it depends on.
type RoleNotes interface {
	RoleNote(sess *session.Session, name string) string
}

// whyNot answers explain: "<tool name>": why the named tool is not among the results, in
// the catalog's words (not in the catalog, held, ranked below the limit,
// not matched), with what only the router knows: a server not ready, the
// session's profile and role. ranked is every match in the order shown.
func whyNot(p Projection, sess *session.Session, q, name string, limit int, ranked []catalog.Match) string {
	snap := p.Snapshot()
	var notes []string
	e, ok := snap.Lookup(name)
	if ch, isCh := p.(Children); isCh {
		for _, srv := range ch.Status() {
			// A tool the catalog holds names its server; an unknown name
			// may be a server's whose prefix it starts with (any name,
			// for an empty prefix) or one's that listed nothing yet.
			its := ok && e.Server == srv.ID
			if !ok {
				its = strings.HasPrefix(name, srv.NamePrefix) || srv.RegisteredToolCount == 0
			}
			if srv.Status != status.Connected && its {
				why := srv.Status
				if srv.LastError != "" {
					why += ": " + srv.LastError
				}
				notes = append(notes, fmt.Sprintf("server %s is not ready (%s)", srv.ID, why))
			}
		}
	}
	reason := snap.WhyNot(q, name, limit, ranked)
	if ok && e.Quarantine == "" {
		if !p.Legacy() && !p.Listed(sess, e) {
			notes = append(notes, "this session's profile does not list it (discovery still finds it; call it by exact name)")
		}
		if r, isR := p.(RoleNotes); isR {
			if note := r.RoleNote(sess, name); note != "" {
				notes = append(notes, note)
			}
		}
	}
	if len(notes) > 0 {
		reason += "; " + strings.Join(notes, "; ")
	}
	return fmt.Sprintf("Why not %s: %s.", name, reason)
}

// discoverStateless replaces the activation line for a client without a
// session (MCP 2026-07-28).
const discoverStateless = "This client has no session, so its tool list does not change: call the matched tools by exact name, with the definitions that follow."

// definitions are the matched tools' full definitions, as tools/list
// would list them, in one JSON object {"tools": [...]}.
func definitions(matches []catalog.Match) string {
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i, m := range matches {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(m.Entry.Listing())
	}
	b.WriteString("]}")
	return b.String()
}

// firstLine keeps discovery output to one line per tool.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

// rerankTools reorders the relevance matches (exact names and prefixes
// stay first) by fusing their lexical rank with their similarity to the
// query, and keeps limit of them.
func rerankTools(ctx context.Context, sem *search.Semantic, q string, ms []catalog.Match, limit int) []catalog.Match {
	head := 0
	for head < len(ms) && ms[head].Tier < 2 {
		head++
	}
	rest := ms[head:]
	docs := make([]search.SemanticDoc, len(rest))
	for i, m := range rest {
		docs[i] = search.SemanticDoc{Text: m.Entry.Name + "\n" + m.Entry.Tool.Title + "\n" + m.Entry.Tool.Description}
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

// parseLimit reads limit as EVOKORE-MCP's Number(limit) does: a number or
// a numeric string; anything else is the default.
func parseLimit(raw json.RawMessage) int {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return 8
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case string:
		n, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 8
		}
		f = n
	default:
		return 8
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 8
	}
	return int(math.Max(math.Min(math.Floor(f), 1e6), -1e6))
}

// FirstBootWait bounds how long discover_tools waits for the children's
// first boot when it found nothing while some were still starting.
const FirstBootWait = 5 * time.Second

// waitFirstBoot waits until every child has finished its first boot, at
// most FirstBootWait; it reports whether they did.
func waitFirstBoot(ctx context.Context, p any) bool {
	b, ok := p.(interface{ ChildrenBooted() <-chan struct{} })
	if !ok {
		return false
	}
	t := time.NewTimer(FirstBootWait)
	defer t.Stop()
	select {
	case <-b.ChildrenBooted():
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// notSearchable says which servers discovery could not search because
// they are still starting with no tool list yet, so a model does not take
// a short answer as final; empty when every server is searchable.
func notSearchable(p any) string {
	ch, ok := p.(Children)
	if !ok {
		return ""
	}
	ids := startingServers(ch)
	if len(ids) == 0 {
		return ""
	}
	return fmt.Sprintf("\nNot searchable yet (still starting): %s. Retry discovery once they are connected (see proxy_server_status).", strings.Join(ids, ", "))
}

// startingServers lists the servers booting without any tools registered.
func startingServers(ch Children) []string {
	var ids []string
	for _, s := range ch.Status() {
		if s.Status == status.Booting && s.RegisteredToolCount == 0 {
			ids = append(ids, s.ID)
		}
	}
	return ids
}

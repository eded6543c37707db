package config

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"cuelang.org/go/cue"

	"github.com/evokore/evokore/internal/canonjson"
	"github.com/evokore/evokore/schema"
)

// MCPConfig is mcp.config.json after validation.
type MCPConfig struct {
	// File is the path the config was read from; Missing is true when no
	// file existed there, which means "no children".
	File    string
	Missing bool

	// Servers are in the order the file wrote them: the catalog lists
	// their tools in that order.
	Servers         []Server
	Discovery       Discovery
	SkillRegistries []SkillRegistry
	Webhooks        []Webhook
	Approvals       Approvals

	// ServerProblems are the problems inside single server definitions.
	// Each failed only its own server (which carries them as Invalid);
	// the rest of the file loaded.
	ServerProblems Diagnostics

	pos positions
}

// Transports a server can use.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	// TransportSSE is the older HTTP+SSE transport (protocol 2024-11-05),
	// for servers that never moved to streamable HTTP.
	TransportSSE = "sse"
)

// Server is one child MCP server as written, placeholders unresolved.
type Server struct {
	ID          string            `json:"-"`
	Transport   string            `json:"transport,omitempty"`
	Command     string            `json:"command,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Cwd         string            `json:"cwd,omitempty"`
	InheritEnv  bool              `json:"inheritEnv,omitempty"`
	URL         string            `json:"url,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	Disabled    bool              `json:"disabled,omitempty"`
	Description string            `json:"description,omitempty"`
	Timeouts    ServerTimeouts    `json:"timeouts,omitzero"`
	RateLimit   *RateLimit        `json:"rateLimit,omitempty"`
	// CooldownMs and Pinning are nil when the file does not set them.
	CooldownMs *int  `json:"cooldownMs,omitempty"`
	Pinning    *bool `json:"pinning,omitempty"`
	// Prefix is put before the child's tool and prompt names, followed by
	// "_"; nil means the server id, and "" passes the names unchanged.
	Prefix *string `json:"prefix,omitempty"`
	// Tasks say, by the child's own tool name, which tools run as MCP
	// tasks ("optional", "required", "forbidden"); the router runs them,
	// so the child need know nothing of tasks. A tool not named is
	// served as optional without saying so.
	Tasks map[string]string `json:"tasks,omitempty"`
	// ExecuteSkills lets execute_skill run the skills this child serves
	// by the Skills Extension; by default only the library's own run.
	ExecuteSkills bool `json:"executeSkills,omitempty"`

	// Invalid, when not empty, is why this server cannot start: the
	// positioned problems of its definition. The child fails with it; the
	// other servers are not affected.
	Invalid string `json:"-"`
	// Dir is the working directory the child starts in: cwd resolved
	// against the config file's folder, or that folder when cwd is
	// absent, so a child never depends on where the client happened to
	// start evokore. [Server.Resolve] sets it.
	Dir string `json:"-"`
	// base is the absolute folder of the config file that defined the
	// server; section the top-level key it was written under.
	base, section string
	// PinNewTools is what happens to a tool a pinned server adds after
	// its tools were first pinned: PinHold (the default) or PinAccept.
	PinNewTools string `json:"pinNewTools,omitempty"`
	// ProtocolVersion is the MCP revision the child is asked for first;
	// "" is the router's default (2025-11-25, then 2026-07-28).
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// OAuth tunes the authorization of an HTTP child; nil is the
	// defaults (package childauth).
	OAuth *OAuth `json:"oauth,omitempty"`
	// LimitScope is whom the server's rate limits and cooldown count:
	// each caller on its own ("" or LimitCaller) or every caller
	// together (LimitGlobal).
	LimitScope string `json:"limitScope,omitempty"`
	// Scope is who shares the child's process: "" or ScopeShared (every
	// caller), ScopeSubject or ScopeSession (an instance per caller).
	Scope string `json:"scope,omitempty"`
	// SubjectEnv names placeholders (${NAME}) that a caller's instance
	// resolves from that caller's entry in its tenant's file of
	// per-subject values (package proxy, SubjectEnvFile), never from the
	// router's environment.
	SubjectEnv []string `json:"subjectEnv,omitempty"`
	// Roots are the folders a shared child is told are its roots when
	// it asks (roots/list): never a caller's. [Server.Resolve] makes
	// them absolute against the config file's folder.
	Roots []string `json:"roots,omitempty"`
}

// Limit scopes of a server's rate limits and cooldown.
const (
	// LimitCaller gives each caller (tenant + subject, or the session
	// without a subject) buckets and cooldowns of its own: the default.
	LimitCaller = "caller"
	// LimitGlobal shares them among every caller, to protect a child
	// from the sum of its callers.
	LimitGlobal = "global"
)

// Scopes of a child: who shares its process.
const (
	// ScopeShared is one child for every caller: the default, so a
	// configuration never multiplies processes unless it says so.
	ScopeShared = "shared"
	// ScopeSubject is one instance per tenant + subject (the session
	// when the caller has no subject).
	ScopeSubject = "subject"
	// ScopeSession is one instance per session.
	ScopeSession = "session"
)

// InstanceScope is the server's scope, ScopeShared when unset.
func (s *Server) InstanceScope() string {
	if s.Scope == "" {
		return ScopeShared
	}
	return s.Scope
}

// PerCaller reports whether each caller gets an instance of its own.
func (s *Server) PerCaller() bool { return s.InstanceScope() != ScopeShared }

// OAuth is a server's oauth block as written: secrets are ${VAR}
// placeholders, resolved by [Server.Resolve].
type OAuth struct {
	// Grant is GrantAuthorizationCode ("" too), GrantClientCredentials
	// or GrantTokenExchange.
	Grant             string   `json:"grant,omitempty"`
	ClientID          string   `json:"clientId,omitempty"`
	ClientSecret      string   `json:"clientSecret,omitempty"`
	PrivateKey        string   `json:"privateKey,omitempty"`
	SigningAlgorithm  string   `json:"signingAlgorithm,omitempty"`
	ClientMetadataURL string   `json:"clientMetadataUrl,omitempty"`
	Scopes            []string `json:"scopes,omitempty"`
	CallbackPort      int      `json:"callbackPort,omitempty"`
	Issuer            string   `json:"issuer,omitempty"`
}

// OAuth grants.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	// GrantTokenExchange trades each caller's inbound bearer token for
	// one of the child's (RFC 8693): a child whose scope is subject or
	// session, reached as the caller.
	GrantTokenExchange = "token_exchange"
)

// Path is where the server is written in its file: servers.<id>, or
// mcpServers.<id> in a file written for another client.
func (s *Server) Path() []string {
	return []string{cmp.Or(s.section, "servers"), s.ID}
}

// What pinning does with a tool a pinned server adds later.
const (
	// PinHold holds the tool until an operator accepts it.
	PinHold = "hold"
	// PinAccept pins it as first seen, like the server's first tools.
	PinAccept = "accept"
)

// IsHTTP reports whether the server is reached at a URL: streamable
// HTTP or the older HTTP+SSE transport.
func (s *Server) IsHTTP() bool { return s.Transport == TransportHTTP || s.Transport == TransportSSE }

// NamePrefix is what the server's tool and prompt names start with as
// clients see them: "<prefix>_", or "" when the prefix is empty.
func (s *Server) NamePrefix() string {
	p := s.ID
	if s.Prefix != nil {
		p = *s.Prefix
	}
	if p == "" {
		return ""
	}
	return p + "_"
}

// PublicName is the name clients see for the child's tool or prompt name.
func (s *Server) PublicName(name string) string { return s.NamePrefix() + name }

// PinningEnabled reports whether tool definitions of this server are pinned.
func (s *Server) PinningEnabled() bool { return s.Pinning == nil || *s.Pinning }

// HoldsNewTools reports whether a tool this server adds after it was
// pinned is held for review.
func (s *Server) HoldsNewTools() bool { return s.PinNewTools != PinAccept }

// Identity is a hash of how the server is reached (transport, command,
// args, url, cwd, as written, placeholders unresolved: a rotated secret
// keeps the identity). Two projects that both name a server "github" but
// start different programs have different identities, so what is known
// about one (its cached tool list, its pins) never applies to the other.
func (s *Server) Identity() string {
	raw, _ := canonjson.Marshal(map[string]any{
		"transport": s.Transport, "command": s.Command, "args": s.Args, "url": s.URL, "cwd": s.Cwd,
	})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// ServerTimeouts override router-wide timeouts for one server; zero means
// "use the router's".
type ServerTimeouts struct {
	BootMs    int `json:"bootMs,omitempty"`
	RequestMs int `json:"requestMs,omitempty"`
}

// RateLimit is a server's rateLimit block in either accepted form.
type RateLimit struct {
	RequestsPerMinute *float64             `json:"requestsPerMinute,omitempty"`
	MaxTokens         *int                 `json:"maxTokens,omitempty"`
	RefillRate        *float64             `json:"refillRate,omitempty"`
	RefillIntervalMs  *int                 `json:"refillIntervalMs,omitempty"`
	ToolLimits        map[string]ToolLimit `json:"toolLimits,omitempty"`
}

// ToolLimit is one toolLimits entry: requests per minute, or a bucket.
type ToolLimit struct {
	RequestsPerMinute *float64
	Bucket            *BucketSpec
}

// BucketSpec is a token bucket in the architecture page's form.
type BucketSpec struct {
	MaxTokens        int      `json:"maxTokens"`
	RefillRate       *float64 `json:"refillRate,omitempty"`
	RefillIntervalMs *int     `json:"refillIntervalMs,omitempty"`
}

// UnmarshalJSON accepts a number or a bucket object.
func (t *ToolLimit) UnmarshalJSON(b []byte) error {
	var rpm float64
	if err := json.Unmarshal(b, &rpm); err == nil {
		t.RequestsPerMinute = &rpm
		return nil
	}
	t.Bucket = new(BucketSpec)
	return json.Unmarshal(b, t.Bucket)
}

// MarshalJSON writes the form that was read.
func (t ToolLimit) MarshalJSON() ([]byte, error) {
	if t.Bucket != nil {
		return json.Marshal(t.Bucket)
	}
	return json.Marshal(t.RequestsPerMinute)
}

// Rate is a normalised token bucket: Burst tokens, refilled at PerSecond.
// A zero Burst means "no limit".
type Rate struct {
	Burst     int
	PerSecond float64
}

func rpmRate(rpm float64) Rate {
	if rpm <= 0 {
		return Rate{}
	}
	return Rate{Burst: max(1, int(rpm)), PerSecond: rpm / 60}
}

func (b BucketSpec) rate() Rate {
	refill, every := 1.0, 1000
	if b.RefillRate != nil {
		refill = *b.RefillRate
	}
	if b.RefillIntervalMs != nil {
		every = *b.RefillIntervalMs
	}
	return Rate{Burst: b.MaxTokens, PerSecond: refill * 1000 / float64(every)}
}

// ServerRate is the server-wide bucket, or a zero Rate when there is none.
func (r *RateLimit) ServerRate() Rate {
	switch {
	case r == nil:
		return Rate{}
	case r.MaxTokens != nil:
		return BucketSpec{MaxTokens: *r.MaxTokens, RefillRate: r.RefillRate, RefillIntervalMs: r.RefillIntervalMs}.rate()
	case r.RequestsPerMinute != nil:
		return rpmRate(*r.RequestsPerMinute)
	}
	return Rate{}
}

// ToolRates are the per-tool buckets keyed by the child's own tool name;
// entries that set no limit are left out.
func (r *RateLimit) ToolRates() map[string]Rate {
	if r == nil || len(r.ToolLimits) == 0 {
		return nil
	}
	out := make(map[string]Rate, len(r.ToolLimits))
	for tool, l := range r.ToolLimits {
		var rate Rate
		if l.Bucket != nil {
			rate = l.Bucket.rate()
		} else if l.RequestsPerMinute != nil {
			rate = rpmRate(*l.RequestsPerMinute)
		}
		if rate.Burst > 0 {
			out[tool] = rate
		}
	}
	return out
}

// Approvals is the approvals block: how a human approves a gated call.
type Approvals struct {
	// Mode is auto, operator or token; "" means auto.
	Mode string `json:"mode"`
}

// Discovery is the discovery block.
type Discovery struct {
	ActiveProfile string
	// Embeddings, when set, turns on semantic reranking.
	Embeddings *Embeddings
	// Profiles are the user's profiles in file order.
	Profiles []Profile
}

// Embeddings is discovery.embeddings: an OpenAI-compatible embeddings
// endpoint and the model to ask for.
type Embeddings struct {
	URL   string `json:"url"`
	Model string `json:"model"`
}

// Profile is one discovery profile.
type Profile struct {
	Name                     string     `json:"-"`
	AlwaysVisible            Visibility `json:"alwaysVisible"`
	Description              string     `json:"description,omitempty"`
	MandatoryInjectionSkills []string   `json:"mandatoryInjectionSkills,omitempty"`
	Budget                   int        `json:"budget,omitempty"`
	// Skills are the only skills the profile serves by the Skills
	// Extension, by name (a child's prefixed, as its tools are) or
	// category/name; nil serves every skill.
	Skills []string `json:"skills,omitempty"`
}

// Visibility is a profile's alwaysVisible: "all", "all-native", or a list.
type Visibility struct {
	// Mode is VisibleAll, VisibleAllNative or VisibleList.
	Mode  string
	Names []string
}

// Visibility modes.
const (
	VisibleAll       = "all"
	VisibleAllNative = "all-native"
	VisibleList      = "list"
)

// UnmarshalJSON accepts the two keywords or a list of names.
func (v *Visibility) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if s != VisibleAll && s != VisibleAllNative {
			return fmt.Errorf("alwaysVisible: unknown keyword %q", s)
		}
		v.Mode = s
		return nil
	}
	v.Mode = VisibleList
	v.Names = []string{}
	return json.Unmarshal(b, &v.Names)
}

// MarshalJSON writes the form that was read.
func (v Visibility) MarshalJSON() ([]byte, error) {
	if v.Mode == VisibleList {
		return json.Marshal(v.Names)
	}
	return json.Marshal(v.Mode)
}

// SkillRegistry is a remote skill index.
type SkillRegistry struct {
	Name    string `json:"name"`
	BaseURL string `json:"baseUrl"`
	Index   string `json:"index"`
}

// Webhook receives event posts.
type Webhook struct {
	URL    string   `json:"url"`
	Events []string `json:"events"`
	Secret string   `json:"secret,omitempty"`
}

// Resolve returns a copy of w with the ${VAR} placeholders of its url and
// secret replaced from env; an unset variable is an error naming it.
func (w Webhook) Resolve(env Env) (Webhook, error) {
	var missing []string
	sub := func(in string) string {
		return placeholder().ReplaceAllStringFunc(in, func(m string) string {
			v, ok := env.Lookup(m[2 : len(m)-1])
			if !ok {
				missing = append(missing, m)
			}
			return v
		})
	}
	r := w
	r.URL, r.Secret = sub(w.URL), sub(w.Secret)
	if missing != nil {
		return Webhook{}, fmt.Errorf("unresolved env placeholder(s) in webhook: %s", strings.Join(slices.Compact(missing), ", "))
	}
	return r, nil
}

// Pos returns where the value at path (such as "servers", id, "command")
// was written, or the closest parent that was.
func (c *MCPConfig) Pos(path ...string) Position { return c.pos.at(c.File, path...) }

// KeyPos returns where the key of the field at path was written: the place
// to report a wrong name rather than a wrong value.
func (c *MCPConfig) KeyPos(path ...string) Position { return c.pos.key(path...) }

// LoadMCPConfig reads mcp.config.json. A file that does not exist is not an
// error: it means no child servers. A file with problems outside the
// server definitions returns [Diagnostics]; a problem inside one server
// only marks that server Invalid (see [MCPConfig.ServerProblems]).
func LoadMCPConfig(file string) (*MCPConfig, error) {
	cfg, _, err := ReadMCPConfig(file)
	return cfg, err
}

// ReadMCPConfig is LoadMCPConfig that also returns the bytes it read (nil
// when the file is missing), for a digest of exactly what was parsed.
func ReadMCPConfig(file string) (*MCPConfig, []byte, error) {
	src, err := ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return &MCPConfig{File: file, Missing: true}, nil, nil
	}
	if err != nil {
		return nil, nil, Diagnostics{ReadProblem(file, err)}
	}
	cfg, ds := ParseMCPConfig(file, src)
	if ds != nil {
		return nil, src, ds
	}
	return cfg, src, nil
}

// CheckMCPConfig reads mcp.config.json for a report: it returns every
// part that decoded, even when other parts did not, and every problem,
// those of single servers included. cfg is nil only when the file could
// not be read or parsed at all.
func CheckMCPConfig(file string) (*MCPConfig, Diagnostics) {
	src, err := ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return &MCPConfig{File: file, Missing: true}, nil
	}
	if err != nil {
		return nil, Diagnostics{ReadProblem(file, err)}
	}
	cfg, ds := parseMCPConfig(file, src)
	if cfg != nil {
		ds = append(ds, cfg.ServerProblems...)
	}
	ds.Sort()
	return cfg, ds
}

// ParseMCPConfig validates and decodes the bytes of an mcp.config.json.
// Diagnostics are the problems outside server definitions; with them no
// config is returned. Problems of single servers are in
// [MCPConfig.ServerProblems].
func ParseMCPConfig(file string, src []byte) (*MCPConfig, Diagnostics) {
	cfg, ds := parseMCPConfig(file, src)
	if ds.HasErrors() {
		return nil, ds
	}
	return cfg, nil
}

// serverSections are the top-level keys that hold servers: evokore's own
// and the one of Claude Desktop, Claude Code and .mcp.json files.
var serverSections = []string{"servers", "mcpServers"}

// parseMCPConfig checks each top-level section, and each server, on its
// own, so one problem neither hides the others nor stops the parts that
// are right. cfg holds what decoded; ds the problems outside servers.
func parseMCPConfig(file string, src []byte) (cfg *MCPConfig, ds Diagnostics) {
	base := ""
	if abs, err := filepath.Abs(filepath.Dir(file)); err == nil {
		base = abs
	}
	ds = withEvaluator(file, func(ev *evaluator) Diagnostics {
		own := ev.definition(schema.MCPConfig)
		data, pos, ds := ev.parse(file, blankForeign(src, own), formatJSON)
		if ds != nil {
			return ds
		}
		cfg = &MCPConfig{File: file, pos: pos}
		// A file written for another client (~/.claude.json) carries that
		// client's settings beside mcpServers: those are not typos.
		top := own
		if data.LookupPath(cue.MakePath(cue.Str("mcpServers"))).Exists() {
			top = ev.definition(schema.ForeignConfig)
		}
		it, err := data.Fields()
		if err != nil {
			return Diagnostics{errAt(pos.at(file), "schema", "%v", err)}
		}
		var out Diagnostics
		for it.Next() {
			label, v := it.Selector().Unquoted(), it.Value()
			if slices.Contains(serverSections, label) {
				out = append(out, cfg.addServers(file, data, v, label, ev.definition(schema.Server), pos, base)...)
				continue
			}
			if !own.Allows(cue.Str(label)) {
				if !top.Allows(cue.Str(label)) {
					out = append(out, errAt(pos.key(label), "schema", "%s: field not allowed", label))
				}
				continue
			}
			def := schemaField(own, label)
			if !def.Exists() {
				continue
			}
			value, vds := check(file, data, v, def, []string{label}, pos)
			if vds != nil {
				out = append(out, vds...)
				continue
			}
			if err := cfg.decodeSection(label, value); err != nil {
				out = append(out, errAt(pos.at(file, label), "decode", "%s: %v", label, err))
			}
		}
		return out
	})
	ds.Sort()
	return cfg, ds
}

// blankForeign returns src with the values of the top-level keys evokore
// does not know overwritten by a number padded with spaces, when src is a
// file written for another client (it has mcpServers). Those values are
// ignored anyway, and a ~/.claude.json can hold megabytes of them (project
// histories) that would take seconds to parse. Every other byte keeps its
// offset, line and column, so positions stay true.
func blankForeign(src []byte, own cue.Value) []byte {
	if !json.Valid(src) {
		return src
	}
	type span struct{ from, to int64 }
	var spans []span
	foreign := false
	dec := json.NewDecoder(bytes.NewReader(src))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return src
	}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return src
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return src
		}
		end := dec.InputOffset()
		if key == "mcpServers" {
			foreign = true
		}
		if !own.Allows(cue.Str(key)) {
			spans = append(spans, span{end - int64(len(raw)), end})
		}
	}
	if !foreign || len(spans) == 0 {
		return src
	}
	out := bytes.Clone(src)
	for _, sp := range spans {
		out[sp.from] = '0'
		for i := sp.from + 1; i < sp.to; i++ {
			if out[i] != '\n' && out[i] != '\r' {
				out[i] = ' '
			}
		}
	}
	return out
}

// decodeSection decodes one validated top-level section.
func (cfg *MCPConfig) decodeSection(label string, v cue.Value) error {
	switch label {
	case "discovery":
		if ap := v.LookupPath(cue.ParsePath("activeProfile")); ap.Exists() {
			if err := ap.Decode(&cfg.Discovery.ActiveProfile); err != nil {
				return err
			}
		}
		if em := v.LookupPath(cue.ParsePath("embeddings")); em.Exists() {
			cfg.Discovery.Embeddings = &Embeddings{}
			if err := em.Decode(cfg.Discovery.Embeddings); err != nil {
				return err
			}
		}
		profiles := v.LookupPath(cue.ParsePath("profiles"))
		if !profiles.Exists() {
			return nil
		}
		it, err := profiles.Fields()
		if err != nil {
			return err
		}
		for it.Next() {
			p := Profile{Name: it.Selector().Unquoted()}
			if err := it.Value().Decode(&p); err != nil {
				return err
			}
			cfg.Discovery.Profiles = append(cfg.Discovery.Profiles, p)
		}
	case "skillRegistries":
		return v.Decode(&cfg.SkillRegistries)
	case "webhooks":
		return v.Decode(&cfg.Webhooks)
	case "approvals":
		return v.Decode(&cfg.Approvals)
	}
	return nil
}

// addServers checks and decodes the servers of one section. A server
// with problems is kept, marked Invalid, so it is reported where servers
// are (proxy_server_status) instead of vanishing.
func (cfg *MCPConfig) addServers(file string, root, section cue.Value, label string, def cue.Value, pos positions, base string) Diagnostics {
	if k := section.IncompleteKind(); k != cue.StructKind {
		return Diagnostics{errAt(pos.at(file, label), "schema", "%s: want a mapping of server ids to servers, not %s", label, k)}
	}
	it, err := section.Fields()
	if err != nil {
		return Diagnostics{errAt(pos.at(file, label), "schema", "%s: %v", label, err)}
	}
	for it.Next() {
		id, v := it.Selector().Unquoted(), it.Value()
		path := []string{label, id}
		if _, dup := cfg.Server(id); dup {
			cfg.ServerProblems = append(cfg.ServerProblems, errAt(pos.key(path...), "duplicate-server",
				"%s.%s: server '%s' is defined twice (under servers and mcpServers); the first definition is used", label, id, id))
			continue
		}
		s := Server{ID: id, base: base}
		value, ds := check(file, root, v, def, path, pos)
		if ds == nil {
			if err := value.Decode(&s); err != nil {
				ds = Diagnostics{errAt(pos.at(file, path...), "decode", "%s.%s: %v", label, id, err)}
			}
		}
		if ds == nil {
			ds = s.settleTransport(value, file, pos, path)
		}
		if ds != nil {
			lines := make([]string, len(ds))
			for i, d := range ds {
				lines[i] = d.String()
			}
			s = Server{ID: id, Transport: TransportStdio, base: base, Invalid: strings.Join(lines, "; ")}
			// A server switched off stays off even when it is also wrong.
			if off, err := v.LookupPath(cue.ParsePath("disabled")).Bool(); err == nil {
				s.Disabled = off
			}
			cfg.ServerProblems = append(cfg.ServerProblems, ds...)
		}
		s.base, s.section = base, label
		cfg.Servers = append(cfg.Servers, s)
	}
	return nil
}

// settleTransport folds type (the name other clients use) into
// Transport: "streamable-http" is "http", both keys must agree, stdio is
// the default.
func (s *Server) settleTransport(v cue.Value, file string, pos positions, path []string) Diagnostics {
	norm := func(t string) string {
		if t == "streamable-http" {
			return TransportHTTP
		}
		return t
	}
	typ, _ := v.LookupPath(cue.ParsePath("type")).String()
	tr, ty := norm(s.Transport), norm(typ)
	where := strings.Join(path, ".")
	if tr != "" && ty != "" && tr != ty {
		return Diagnostics{errAt(pos.at(file, append(slices.Clone(path), "type")...), "schema",
			"%s: type %q and transport %q disagree", where, typ, s.Transport)}
	}
	s.Transport = cmp.Or(tr, ty, TransportStdio)
	return nil
}

// Server returns the server with the given id.
func (c *MCPConfig) Server(id string) (*Server, bool) {
	for i := range c.Servers {
		if c.Servers[i].ID == id {
			return &c.Servers[i], true
		}
	}
	return nil, false
}

package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"cuelang.org/go/cue"

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

	pos positions
}

// Transports a server can use.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
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
}

// IsHTTP reports whether the server is reached over streamable HTTP.
func (s *Server) IsHTTP() bool { return s.Transport == TransportHTTP }

// PinningEnabled reports whether tool definitions of this server are pinned.
func (s *Server) PinningEnabled() bool { return s.Pinning == nil || *s.Pinning }

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

// Pos returns where the value at path (such as "servers", id, "command")
// was written, or the closest parent that was.
func (c *MCPConfig) Pos(path ...string) Position { return c.pos.at(c.File, path...) }

// KeyPos returns where the key of the field at path was written: the place
// to report a wrong name rather than a wrong value.
func (c *MCPConfig) KeyPos(path ...string) Position { return c.pos.key(path...) }

// LoadMCPConfig reads mcp.config.json. A file that does not exist is not an
// error: it means no child servers. An invalid file returns [Diagnostics].
func LoadMCPConfig(file string) (*MCPConfig, error) {
	src, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return &MCPConfig{File: file, Missing: true}, nil
	}
	if err != nil {
		return nil, Diagnostics{errAt(Position{File: file}, "read", "%v", err)}
	}
	cfg, ds := ParseMCPConfig(file, src)
	if ds != nil {
		return nil, ds
	}
	return cfg, nil
}

// ParseMCPConfig validates and decodes the bytes of an mcp.config.json.
func ParseMCPConfig(file string, src []byte) (*MCPConfig, Diagnostics) {
	doc, ds := validate(file, src, formatJSON, schema.MCPConfig)
	if ds != nil {
		return nil, ds
	}
	cfg := &MCPConfig{File: file, pos: doc.pos}
	err := errors.Join(
		doc.fields("servers", func(id string, v cue.Value) error {
			s := Server{ID: id}
			if err := v.Decode(&s); err != nil {
				return err
			}
			if s.Transport == "" {
				s.Transport = TransportStdio
			}
			cfg.Servers = append(cfg.Servers, s)
			return nil
		}),
		doc.decode("discovery.activeProfile", &cfg.Discovery.ActiveProfile),
		doc.decode("discovery.embeddings", &cfg.Discovery.Embeddings),
		doc.fields("discovery.profiles", func(name string, v cue.Value) error {
			p := Profile{Name: name}
			if err := v.Decode(&p); err != nil {
				return err
			}
			cfg.Discovery.Profiles = append(cfg.Discovery.Profiles, p)
			return nil
		}),
		doc.decode("skillRegistries", &cfg.SkillRegistries),
		doc.decode("webhooks", &cfg.Webhooks),
	)
	if err != nil {
		return nil, doc.decodeErr(err)
	}
	return cfg, nil
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

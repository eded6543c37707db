package config

import (
	"encoding/json"
	"errors"
	"strconv"

	"cuelang.org/go/cue"

	"github.com/evokore/evokore/schema"
)

// Shipped is evokore.cue after validation: what `go generate` compiles
// into the router.
type Shipped struct {
	Server struct {
		Name         string `json:"name"`
		Instructions string `json:"instructions"`
	} `json:"server"`
	Tools          []NativeTool      `json:"tools"`
	Profiles       []Profile         `json:"-"`
	DefaultProfile string            `json:"defaultProfile"`
	Roles          []Role            `json:"-"`
	Rules          map[string]string `json:"rules"`
	Timeouts       Timeouts          `json:"timeouts"`
	// Jargon maps a developer's word to what it stands for (search query
	// expansion).
	Jargon map[string][]string `json:"jargon"`
	// Variables are the declared environment variables, in the order
	// written.
	Variables []Variable `json:"-"`
}

// NativeTool is one entry of the native tool table.
type NativeTool struct {
	Name        string      `json:"name"`
	Manager     string      `json:"manager"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	Annotations Annotations `json:"annotations"`
	// Execution are the tool's execution hints: whether it runs as an
	// MCP task.
	Execution   *Execution      `json:"execution,omitempty"`
	InputSchema json.RawMessage `json:"-"`
}

// Execution is a native tool's task support: "optional", "required" or
// "forbidden".
type Execution struct {
	TaskSupport string `json:"taskSupport"`
}

// Annotations are the four MCP behaviour hints.
type Annotations struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	DestructiveHint bool `json:"destructiveHint"`
	IdempotentHint  bool `json:"idempotentHint"`
	OpenWorldHint   bool `json:"openWorldHint"`
}

// Timeouts are the shipped defaults, in milliseconds.
type Timeouts struct {
	ChildBootMs     int `json:"childBootMs"`
	ProxyRequestMs  int `json:"proxyRequestMs"`
	CooldownMs      int `json:"cooldownMs"`
	ApprovalTTLMs   int `json:"approvalTtlMs"`
	SessionTTLMs    int `json:"sessionTtlMs"`
	ShutdownGraceMs int `json:"shutdownGraceMs"`
}

// LoadShipped reads and validates evokore.cue.
func LoadShipped(file string) (*Shipped, error) {
	src, err := ReadFile(file)
	if err != nil {
		return nil, Diagnostics{ReadProblem(file, err)}
	}
	doc, ds := validate(file, src, formatCUE, schema.Shipped)
	if ds != nil {
		return nil, ds
	}
	var s Shipped
	err = errors.Join(
		doc.decode("", &s),
		doc.fields("profiles", func(name string, v cue.Value) error {
			p := Profile{Name: name}
			if err := v.Decode(&p); err != nil {
				return err
			}
			s.Profiles = append(s.Profiles, p)
			return nil
		}),
		doc.fields("variables", func(name string, v cue.Value) error {
			vr := Variable{Name: name}
			if err := v.Decode(&vr); err != nil {
				return err
			}
			if d := v.LookupPath(cue.ParsePath("default")); d.Exists() {
				vr.HasDefault = true
				switch d.Kind() {
				case cue.BoolKind:
					b, _ := d.Bool()
					vr.Default = strconv.FormatBool(b)
				case cue.IntKind:
					n, _ := d.Int64()
					vr.Default = strconv.FormatInt(n, 10)
				default:
					vr.Default, _ = d.String()
				}
			}
			s.Variables = append(s.Variables, vr)
			return nil
		}),
		doc.fields("roles", func(name string, v cue.Value) error {
			r := Role{Name: name}
			if err := v.Decode(&r); err != nil {
				return err
			}
			s.Roles = append(s.Roles, r)
			return nil
		}),
	)
	if err != nil {
		return nil, doc.decodeErr(err)
	}
	// Schemas are kept as the JSON CUE renders, in the order written.
	list, err := doc.value.LookupPath(cue.ParsePath("tools")).List()
	if err != nil {
		return nil, doc.decodeErr(err)
	}
	for i := 0; list.Next(); i++ {
		raw, err := list.Value().LookupPath(cue.ParsePath("inputSchema")).MarshalJSON()
		if err != nil {
			return nil, doc.decodeErr(err)
		}
		s.Tools[i].InputSchema = raw
	}
	return &s, nil
}

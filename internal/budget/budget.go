// Package budget measures what a discovery profile costs a client's
// context: the tools it lists before any discovery, the bytes of that
// tools/list JSON, and its tokens in real tokenizers (cl100k_base and
// o200k_base, offline). `evokore profile` prints it; CI can fail on a
// budget.
package budget

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tiktoken-go/tokenizer/codec"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/tsdecl"
)

// Encodings the counter knows.
const (
	Cl100k = "cl100k"
	O200k  = "o200k"
)

var (
	cl100k = sync.OnceValue(codec.NewCl100kBase)
	o200k  = sync.OnceValue(codec.NewO200kBase)
)

// Count returns the number of tokens of text in an encoding.
func Count(encoding, text string) (int, error) {
	switch encoding {
	case Cl100k:
		return cl100k().Count(text)
	case O200k:
		return o200k().Count(text)
	}
	return 0, fmt.Errorf("unknown tokenizer %q (want cl100k or o200k)", encoding)
}

// Tool is one listed tool in a report.
type Tool struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Server string `json:"server,omitempty"`
	Title  string `json:"title,omitempty"`
}

// Report is what one profile lists and costs.
type Report struct {
	Profile     string         `json:"profile"`
	Description string         `json:"description,omitempty"`
	Tools       []Tool         `json:"tools"`
	Count       int            `json:"count"`
	Bytes       int            `json:"bytes"`
	Tokens      map[string]int `json:"tokens"`
	// StubTokens are the tokens, per encoding, of the TypeScript
	// declarations of the same tools (describe_tool format "typescript",
	// what a run_code program is written against).
	StubTokens map[string]int `json:"stubTokens"`
	// Budget is the profile's own budget, or the one given on the command
	// line; 0 means none.
	Budget     int  `json:"budget,omitempty"`
	OverBudget bool `json:"overBudget"`
	// Missing are proxied names the profile lists that no known tool has
	// (no cached or live tool list for their server).
	Missing []string `json:"missing,omitempty"`
}

// Measure projects snap through p (a fresh session: no activations) and
// counts the listing in each encoding. budget, when positive, replaces the
// profile's own; it is compared with the first encoding's count.
func Measure(p *catalog.Profile, snap *catalog.Snapshot, encodings []string, budget int) (Report, error) {
	entries := snap.Project(p, false, nil)
	r := Report{Profile: p.Name, Description: p.Description, Tools: []Tool{}, Tokens: map[string]int{}, Budget: p.Budget}
	if budget > 0 {
		r.Budget = budget
	}
	tools := make([]json.RawMessage, len(entries))
	defs := make([]*mcp.Tool, len(entries))
	for i, e := range entries {
		tools[i] = e.Listing()
		defs[i] = e.Tool
		r.Tools = append(r.Tools, Tool{Name: e.Name, Source: e.Source.String(), Server: e.Server, Title: e.Tool.Title})
	}
	r.Count = len(tools)
	// The bytes and tokens are those of the JSON the router sends.
	raw, err := json.Marshal(struct {
		Tools []json.RawMessage `json:"tools"`
	}{tools})
	if err != nil {
		return r, err
	}
	r.Bytes = len(raw)
	for _, enc := range encodings {
		n, err := Count(enc, string(raw))
		if err != nil {
			return r, err
		}
		r.Tokens[enc] = n
	}
	r.StubTokens = map[string]int{}
	stubs := tsdecl.Declarations(defs)
	for _, enc := range encodings {
		n, err := Count(enc, stubs)
		if err != nil {
			return r, err
		}
		r.StubTokens[enc] = n
	}
	if r.Budget > 0 && len(encodings) > 0 {
		r.OverBudget = r.Tokens[encodings[0]] > r.Budget
	}
	if p.Visibility == catalog.VisibleList {
		for _, name := range p.Proxied {
			if _, ok := snap.Lookup(name); !ok {
				r.Missing = append(r.Missing, name)
			}
		}
	}
	return r, nil
}

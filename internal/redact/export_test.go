package redact

import (
	"encoding/json"
	"slices"
)

// RawCallArgs is the in-place path of Call alone; ok false when it
// hands the arguments to the decode path.
func (s *Scrubber) RawCallArgs(raw json.RawMessage) (*CallArgs, bool) { return s.rawCallArgs(raw) }

// DecodedCallArgs is the decode path of Call alone.
func (s *Scrubber) DecodedCallArgs(raw json.RawMessage) *CallArgs { return s.decodedCallArgs(raw) }

// Needles lists the texts s replaces, sorted.
func (s *Scrubber) Needles() []string {
	var out []string
	for _, n := range s.current().needles {
		out = append(out, string(n))
	}
	slices.Sort(out)
	return out
}

package config

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/evokore/evokore/schema"
)

// DamageControlRules is damage-control-rules.yaml after validation, with
// every expression compiled.
type DamageControlRules struct {
	// File is where the rules were read from.
	File                 string          `json:"-" yaml:"-"`
	BashToolPatterns     []DamagePattern `json:"bashToolPatterns" yaml:"bashToolPatterns"`
	ZeroAccessPaths      []string        `json:"zeroAccessPaths" yaml:"zeroAccessPaths"`
	ZeroAccessExceptions []string        `json:"zeroAccessExceptions" yaml:"zeroAccessExceptions"`
	ReadOnlyPaths        []string        `json:"readOnlyPaths" yaml:"readOnlyPaths"`
	NoDeletePaths        []string        `json:"noDeletePaths" yaml:"noDeletePaths"`
}

// DamagePattern is one dangerous-command rule.
type DamagePattern struct {
	Pattern string   `json:"pattern" yaml:"pattern"`
	And     []string `json:"and,omitempty" yaml:"and"`
	Reason  string   `json:"reason" yaml:"reason"`
	Ask     bool     `json:"ask,omitempty" yaml:"ask"`

	// Compiled holds Pattern then each of And.
	Compiled []*regexp.Regexp `json:"-" yaml:"-"`
}

// Matches reports whether every expression of the rule matches s.
func (p *DamagePattern) Matches(s string) bool {
	if len(p.Compiled) == 0 {
		return false
	}
	for _, re := range p.Compiled {
		if !re.MatchString(s) {
			return false
		}
	}
	return true
}

// ParseDamageControl validates the bytes of a damage-control-rules.yaml
// against #DamageControlRules and compiles its expressions; an expression
// RE2 cannot compile is reported where it was written.
func ParseDamageControl(file string, src []byte) (*DamageControlRules, Diagnostics) {
	doc, ds := validate(file, src, formatYAML, schema.DamageControl)
	if ds != nil {
		return nil, ds
	}
	r := &DamageControlRules{File: file}
	if err := doc.decode("", r); err != nil {
		return nil, doc.decodeErr(err)
	}
	if out := r.compile(func(path ...string) Position { return doc.pos.at(file, path...) }); out != nil {
		return nil, out
	}
	return r, nil
}

// DecodeDamageControl decodes rules already known to satisfy
// #DamageControlRules (the shipped set, or a file whose exact content
// ParseDamageControl accepted before) without evaluating CUE, which a hook
// that runs before every tool call cannot afford each time. Anything
// surprising (an unknown field, a second document) is an error, and the
// caller falls back to ParseDamageControl.
func DecodeDamageControl(file string, src []byte) (*DamageControlRules, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	r := &DamageControlRules{File: file}
	if err := dec.Decode(r); err != nil {
		return nil, err
	}
	var extra any
	if dec.Decode(&extra) == nil {
		return nil, fmt.Errorf("%s: more than one YAML document", file)
	}
	if ds := r.compile(func(...string) Position { return Position{File: file} }); ds != nil {
		return nil, ds
	}
	return r, nil
}

// compile compiles every expression; pos places a failure.
func (r *DamageControlRules) compile(pos func(path ...string) Position) Diagnostics {
	var out Diagnostics
	for i := range r.BashToolPatterns {
		p := &r.BashToolPatterns[i]
		exprs := append([]string{p.Pattern}, p.And...)
		for j, expr := range exprs {
			re, err := regexp.Compile(expr)
			if err != nil {
				path := []string{"bashToolPatterns", strconv.Itoa(i), "pattern"}
				if j > 0 {
					path = []string{"bashToolPatterns", strconv.Itoa(i), "and", strconv.Itoa(j - 1)}
				}
				out = append(out, errAt(pos(path...), "regexp", "%s", fmt.Sprintf("not a valid regular expression: %v", err)))
				continue
			}
			p.Compiled = append(p.Compiled, re)
		}
	}
	return out
}

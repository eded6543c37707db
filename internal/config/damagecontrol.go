package config

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/evokore/evokore/schema"
)

// DamageControlRules is damage-control-rules.yaml after validation, with
// every expression compiled.
type DamageControlRules struct {
	// File is where the rules were read from.
	File                 string          `json:"-"`
	BashToolPatterns     []DamagePattern `json:"bashToolPatterns"`
	ZeroAccessPaths      []string        `json:"zeroAccessPaths"`
	ZeroAccessExceptions []string        `json:"zeroAccessExceptions"`
	ReadOnlyPaths        []string        `json:"readOnlyPaths"`
	NoDeletePaths        []string        `json:"noDeletePaths"`
}

// DamagePattern is one dangerous-command rule.
type DamagePattern struct {
	Pattern string   `json:"pattern"`
	And     []string `json:"and,omitempty"`
	Reason  string   `json:"reason"`
	Ask     bool     `json:"ask,omitempty"`

	// Compiled holds Pattern then each of And.
	Compiled []*regexp.Regexp `json:"-"`
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
				out = append(out, errAt(doc.pos.at(file, path...), "regexp", "%s", fmt.Sprintf("not a valid regular expression: %v", err)))
				continue
			}
			p.Compiled = append(p.Compiled, re)
		}
	}
	if out != nil {
		return nil, out
	}
	return r, nil
}

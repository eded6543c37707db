package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	yamlast "github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// checkYAML parses YAML once on its own, before CUE sees it, for two
// things CUE's YAML reader does badly: it positions syntax errors by line
// only (sometimes the wrong one), and an alias inside its own anchor makes
// it recurse until the stack overflows, which no recover can catch.
func checkYAML(file string, src []byte) Diagnostics {
	tokens := lexer.Tokenize(string(src))
	if d := tooDeep(file, tokens); d != nil {
		return d
	}
	f, err := parser.Parse(tokens, 0)
	if err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil && ye.GetToken().Position != nil {
			p := ye.GetToken().Position
			msg := strings.Replace(ye.GetMessage(), "found character '\t' that cannot start any token", "found a tab character, which cannot indent YAML (use spaces)", 1)
			return Diagnostics{errAt(Position{File: file, Line: p.Line, Col: p.Column}, "syntax", "%s", msg)}
		}
		return Diagnostics{errAt(Position{File: file}, "syntax", "%v", err)}
	}
	var ds Diagnostics
	for _, doc := range f.Docs {
		if doc.Body == nil {
			continue
		}
		yamlast.Walk(aliasCheck{file: file, out: &ds}, doc.Body)
	}
	return ds
}

// aliasCheck finds aliases used inside the anchor they name.
type aliasCheck struct {
	file    string
	anchors []string
	out     *Diagnostics
}

func (a aliasCheck) Visit(n yamlast.Node) yamlast.Visitor {
	switch x := n.(type) {
	case nil:
		return nil
	case *yamlast.AnchorNode:
		if x.Name != nil {
			next := a
			next.anchors = append(append([]string(nil), a.anchors...), x.Name.String())
			return next
		}
	case *yamlast.AliasNode:
		if x.Value == nil {
			return a
		}
		name := x.Value.String()
		for _, anchor := range a.anchors {
			if anchor == name {
				p := x.GetToken().Position
				*a.out = append(*a.out, errAt(Position{File: a.file, Line: p.Line, Col: p.Column}, "syntax",
					"%s", fmt.Sprintf("alias *%s is used inside its own anchor &%s", name, name)))
			}
		}
	}
	return a
}

// MaxYAMLDepth is how deeply YAML collections may nest. The parsers
// (this one, yaml.v3 and CUE's) take time that grows with the square of
// the nesting, so a frontmatter of 200 KB of "[" kept a skill index (or
// a fetch_skill call) busy for minutes; real files nest a few levels.
const MaxYAMLDepth = 100

// tooDeep finds nesting over MaxYAMLDepth in the tokens, which the lexer
// makes in linear time: flow brackets, plus the block "-" and "?"
// indicators that open a collection without a line of their own
// ("- - - x"), tracked by column. Nesting that needs a new indented line
// per level is not counted: the file's size cap keeps it shallow enough.
func tooDeep(file string, tokens token.Tokens) Diagnostics {
	flow := 0
	var block []int // columns of the open block indicators
	line := 0
	for _, tk := range tokens {
		if tk.Position == nil {
			continue
		}
		if flow == 0 && tk.Position.Line != line {
			// The first token of a line closes the block collections
			// indented as far as it or further.
			for len(block) > 0 && block[len(block)-1] >= tk.Position.Column {
				block = block[:len(block)-1]
			}
		}
		line = tk.Position.Line
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow++
		case token.SequenceEndType, token.MappingEndType:
			flow = max(flow-1, 0)
		case token.SequenceEntryType, token.MappingKeyType:
			if flow == 0 {
				for len(block) > 0 && block[len(block)-1] >= tk.Position.Column {
					block = block[:len(block)-1]
				}
				block = append(block, tk.Position.Column)
			}
		}
		if flow+len(block) > MaxYAMLDepth {
			return Diagnostics{errAt(Position{File: file, Line: tk.Position.Line, Col: tk.Position.Column}, "syntax",
				"collections nest more than %d levels deep", MaxYAMLDepth)}
		}
	}
	return nil
}

package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
	yamlast "github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// checkYAML parses YAML once on its own, before CUE sees it, for two
// things CUE's YAML reader does badly: it positions syntax errors by line
// only (sometimes the wrong one), and an alias inside its own anchor makes
// it recurse until the stack overflows, which no recover can catch.
func checkYAML(file string, src []byte) Diagnostics {
	f, err := parser.ParseBytes(src, 0)
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

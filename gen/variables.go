package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/evokore/evokore/internal/config"
)

// initialisms keep Go's spelling in the names of typed defaults
// (DefaultMCPConfigPath, not DefaultMcpConfigPath).
var initialisms = map[string]bool{
	"MCP": true, "HTTP": true, "URL": true, "URI": true, "TTL": true, "TTS": true, "STT": true,
	"WS": true, "ID": true, "CPU": true, "MB": true, "JWKS": true, "JS": true, "NPM": true,
}

// defaultName is the Go name of a variable's typed default:
// EVOKORE_TOOL_SCHEMA_FALLBACK_MS is DefaultToolSchemaFallback (a
// time.Duration), VOICE_SIDECAR_PORT is DefaultVoiceSidecarPort.
func defaultName(v config.Variable) string {
	name := strings.TrimPrefix(v.Name, "EVOKORE_")
	if v.Type == "duration_ms" {
		name = strings.TrimSuffix(name, "_MS")
	}
	var b strings.Builder
	b.WriteString("Default")
	for _, part := range strings.Split(name, "_") {
		if initialisms[part] {
			b.WriteString(part)
			continue
		}
		b.WriteString(part[:1] + strings.ToLower(part[1:]))
	}
	return b.String()
}

// typedDefault renders a variable's default as a Go constant of its type.
func typedDefault(v config.Variable) jen.Code {
	switch v.Type {
	case "bool":
		return jen.Lit(v.Default == "true")
	case "int":
		n, _ := strconv.Atoi(v.Default)
		return jen.Lit(n)
	case "duration_ms":
		n, _ := strconv.Atoi(v.Default)
		return jen.Lit(n).Op("*").Qual("time", "Millisecond")
	}
	return jen.Lit(v.Default)
}

func renderVariables(s *config.Shipped) *jen.File {
	f := jen.NewFile("config")
	f.Comment("variables are the EVOKORE_* and VOICE_SIDECAR_* variables of evokore.cue, in its order.")
	f.Var().Id("variables").Op("=").Index(jen.Op("...")).Id("Variable").ValuesFunc(func(g *jen.Group) {
		for _, v := range s.Variables {
			fields := []jen.Code{
				field("Name", jen.Lit(v.Name)),
				field("Type", jen.Lit(v.Type)),
			}
			if v.HasDefault {
				fields = append(fields, field("Default", jen.Lit(v.Default)), field("HasDefault", jen.True()))
			}
			if v.DefaultText != "" {
				fields = append(fields, field("DefaultText", jen.Lit(v.DefaultText)))
			}
			fields = append(fields,
				field("Doc", jen.Lit(v.Doc)),
				field("Package", jen.Lit(v.Package)),
				field("Group", jen.Lit(v.Group)),
				field("Use", jen.Lit(v.Use)))
			if v.Security {
				fields = append(fields, field("Security", jen.True()))
			}
			if len(v.Values) > 0 {
				fields = append(fields, field("Values", stringList(v.Values)))
			}
			g.Line().Values(fields...)
		}
		g.Line()
	})

	f.Comment("Typed defaults of the variables that have one: readers take their")
	f.Comment("defaults from here, so the code, the warnings and docs/configuration.md agree.")
	f.Const().DefsFunc(func(g *jen.Group) {
		for _, v := range s.Variables {
			if v.HasDefault {
				g.Commentf("%s is %s's default.", defaultName(v), v.Name)
				g.Id(defaultName(v)).Op("=").Add(typedDefault(v))
			}
		}
	})
	return f
}

// renderConfigDoc renders the variables' part of docs/configuration.md:
// one table per group. The rest of that page is written by hand.
func renderConfigDoc(s *config.Shipped) []byte {
	var b bytes.Buffer
	var group string
	for _, v := range s.Variables {
		if v.Group != group {
			group = v.Group
			fmt.Fprintf(&b, "\n### %s\n\n| Variable | Type | Default | What it does |\n|---|---|---|---|\n", group)
		}
		doc := v.Doc
		if v.Security {
			doc = "*security*: " + doc
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", v.Name, docType(v), docDefault(v), cell(doc))
	}
	b.WriteString("\n")
	return b.Bytes()
}

func docType(v config.Variable) string {
	switch v.Type {
	case "enum":
		vals := make([]string, len(v.Values))
		for i, x := range v.Values {
			vals[i] = "`" + x + "`"
		}
		return strings.Join(vals, " \\| ")
	case "duration_ms":
		return "milliseconds"
	}
	return v.Type
}

func docDefault(v config.Variable) string {
	switch {
	case v.HasDefault && v.Default != "":
		return "`" + v.Default + "`"
	case v.DefaultText != "":
		return cell(v.DefaultText)
	}
	return ""
}

// cell keeps a table cell one cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

package main

import (
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/dave/jennifer/jen"

	"github.com/evokore/evokore/internal/config"
)

// camel turns "describe_tool" or "legacy-full" into "DescribeTool".
func camel(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if r == '_' || r == '-' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// field renders `Name: value` inside a composite literal, keeping the
// order the fields are written in (jen.Dict would sort them).
func field(name string, value jen.Code) jen.Code { return jen.Id(name).Op(":").Add(value) }

// rawString renders s as a raw string literal when it can, for readable
// JSON in the generated table.
func rawString(s string) jen.Code {
	if strings.ContainsRune(s, '`') || strings.ContainsRune(s, '\r') {
		return jen.Lit(s)
	}
	return jen.Id("`" + s + "`")
}

func stringList(names []string) jen.Code {
	vals := make([]jen.Code, len(names))
	for i, n := range names {
		vals[i] = jen.Lit(n)
	}
	return jen.Index().String().Values(vals...)
}

// taskSupport renders a native tool's task support, or nothing when it
// declares none.
func taskSupport(t config.NativeTool) jen.Code {
	if t.Execution == nil {
		return jen.Null()
	}
	return field("TaskSupport", jen.Lit(t.Execution.TaskSupport))
}

func nativeNames(s *config.Shipped) map[string]bool {
	out := make(map[string]bool, len(s.Tools))
	for _, t := range s.Tools {
		out[t.Name] = true
	}
	return out
}

func renderTools(s *config.Shipped) *jen.File {
	f := jen.NewFile("native")

	var managers []string
	for _, t := range s.Tools {
		if !slices.Contains(managers, t.Manager) {
			managers = append(managers, t.Manager)
		}
	}
	f.Comment("Managers of native tools, in the order their tools are listed.")
	f.Const().DefsFunc(func(g *jen.Group) {
		for _, m := range managers {
			g.Id("Manager" + camel(m)).Id("Manager").Op("=").Lit(m)
		}
	})

	f.Comment("Native tools, in catalog order.")
	f.Const().DefsFunc(func(g *jen.Group) {
		for i, t := range s.Tools {
			if i == 0 {
				g.Id(camel(t.Name)).Id("ToolID").Op("=").Iota()
			} else {
				g.Id(camel(t.Name))
			}
		}
	})
	f.Comment("NumTools is the number of native tools.")
	f.Const().Id("NumTools").Op("=").Lit(len(s.Tools))

	f.Var().Id("specs").Op("=").Index(jen.Id("NumTools")).Id("Spec").ValuesFunc(func(g *jen.Group) {
		for _, t := range s.Tools {
			g.Line().Values(
				field("ID", jen.Id(camel(t.Name))),
				field("Name", jen.Lit(t.Name)),
				field("Manager", jen.Id("Manager"+camel(t.Manager))),
				field("Title", jen.Lit(t.Title)),
				field("Description", jen.Lit(t.Description)),
				field("ReadOnly", jen.Lit(t.Annotations.ReadOnlyHint)),
				field("Destructive", jen.Lit(t.Annotations.DestructiveHint)),
				field("Idempotent", jen.Lit(t.Annotations.IdempotentHint)),
				field("OpenWorld", jen.Lit(t.Annotations.OpenWorldHint)),
				field("InputSchema", rawString(string(t.InputSchema))),
				taskSupport(t),
			)
		}
		g.Line()
	})

	f.Var().Id("byName").Op("=").Map(jen.String()).Id("ToolID").ValuesFunc(func(g *jen.Group) {
		for _, t := range s.Tools {
			g.Line().Lit(t.Name).Op(":").Id(camel(t.Name))
		}
		g.Line()
	})
	return f
}

func renderProfiles(s *config.Shipped) *jen.File {
	f := jen.NewFile("catalog")
	natives := nativeNames(s)

	f.Comment("DefaultProfile is the profile used when nothing selects another.")
	f.Const().Id("DefaultProfile").Op("=").Lit(s.DefaultProfile)

	f.Comment("shippedProfiles are the profiles of evokore.cue, in the order written.")
	f.Var().Id("shippedProfiles").Op("=").Index().Id("Profile").ValuesFunc(func(g *jen.Group) {
		for _, p := range s.Profiles {
			fields := []jen.Code{
				field("Name", jen.Lit(p.Name)),
				field("Description", jen.Lit(p.Description)),
			}
			switch p.AlwaysVisible.Mode {
			case config.VisibleAll:
				fields = append(fields, field("Visibility", jen.Id("VisibleAll")))
			case config.VisibleAllNative:
				fields = append(fields, field("Visibility", jen.Id("VisibleAllNative")))
			default:
				var proxied []string
				nat := jen.Dict{}
				for _, n := range p.AlwaysVisible.Names {
					if natives[n] {
						nat[jen.Lit(n)] = jen.True()
					} else {
						proxied = append(proxied, n)
					}
				}
				fields = append(fields,
					field("Visibility", jen.Id("VisibleList")),
					field("Natives", jen.Map(jen.String()).Bool().Values(nat)),
					field("Proxied", stringList(proxied)))
			}
			if len(p.MandatoryInjectionSkills) > 0 {
				fields = append(fields, field("MandatoryInjectionSkills", stringList(p.MandatoryInjectionSkills)))
			}
			if p.Budget > 0 {
				fields = append(fields, field("Budget", jen.Lit(p.Budget)))
			}
			if p.Skills != nil {
				fields = append(fields, field("Skills", stringList(p.Skills)))
			}
			g.Line().Values(fields...)
		}
		g.Line()
	})
	return f
}

var levelIDs = map[string]string{
	config.LevelAllow:           "Allow",
	config.LevelRequireApproval: "RequireApproval",
	config.LevelDeny:            "Deny",
}

func renderMatrix(s *config.Shipped) *jen.File {
	f := jen.NewFile("policy")
	cfg := modulePath + "/internal/config"

	f.Comment("shippedMatrix is the level of every native tool under each shipped role.")
	f.Var().Id("shippedMatrix").Op("=").Map(jen.String()).Map(jen.String()).Id("Level").ValuesFunc(func(g *jen.Group) {
		for _, r := range s.Roles {
			row := jen.Dict{}
			for _, t := range s.Tools {
				level, ok := r.Overrides[t.Name]
				if !ok {
					level = r.DefaultPermission
				}
				row[jen.Lit(t.Name)] = jen.Id(levelIDs[level])
			}
			g.Line().Lit(r.Name).Op(":").Values(row)
		}
		g.Line()
	})

	f.Comment("ShippedPermissions returns the roles and flat rules used when no permissions.yml exists.")
	f.Comment("Every call builds a fresh value, so a caller that changes its maps or slices changes")
	f.Comment("nothing anyone else sees.")
	f.Func().Id("ShippedPermissions").Params().Qual(cfg, "Permissions").Block(jen.Return(jen.Qual(cfg, "Permissions").Values(
		field("Roles", jen.Index().Qual(cfg, "Role").ValuesFunc(func(g *jen.Group) {
			for _, r := range s.Roles {
				ov := jen.Dict{}
				for k, v := range r.Overrides {
					ov[jen.Lit(k)] = jen.Lit(v)
				}
				g.Line().Values(
					field("Name", jen.Lit(r.Name)),
					field("Description", jen.Lit(r.Description)),
					field("DefaultPermission", jen.Lit(r.DefaultPermission)),
					field("Overrides", jen.Map(jen.String()).String().Values(ov)),
				)
			}
			g.Line()
		})),
		field("Rules", jen.Map(jen.String()).String().Values(jen.DictFunc(func(d jen.Dict) {
			for _, k := range slices.Sorted(maps.Keys(s.Rules)) {
				d[jen.Lit(k)] = jen.Lit(s.Rules[k])
			}
		}))),
	)))
	return f
}

func renderDefaults(s *config.Shipped) *jen.File {
	f := jen.NewFile("server")
	ms := func(n int) jen.Code { return jen.Lit(n).Op("*").Qual("time", "Millisecond") }

	f.Comment("serverName is the name initialize reports.")
	f.Const().Id("serverName").Op("=").Lit(s.Server.Name)
	f.Comment("instructions is the text initialize gives clients to show the model.")
	f.Const().Id("instructions").Op("=").Lit(s.Server.Instructions)

	t := s.Timeouts
	f.Comment("ShippedDefaults are the values EVOKORE_* variables override.")
	f.Var().Id("ShippedDefaults").Op("=").Qual(modulePath+"/internal/config", "Defaults").Values(
		field("ChildBootTimeout", ms(t.ChildBootMs)),
		field("ProxyRequestTimeout", ms(t.ProxyRequestMs)),
		field("SessionTTL", ms(t.SessionTTLMs)),
		field("ShutdownGrace", ms(t.ShutdownGraceMs)),
	)
	f.Comment("approvalTTL is how long an approval lives; no variable sets it.")
	f.Const().Id("approvalTTL").Op("=").Add(ms(t.ApprovalTTLMs))
	f.Comment("failureCooldown is the cooldown of a failing call whose server sets none.")
	f.Const().Id("failureCooldown").Op("=").Add(ms(t.CooldownMs))
	return f
}

func renderJargon(s *config.Shipped) *jen.File {
	f := jen.NewFile("search")
	f.Comment("jargon maps a developer's word to the words and phrases it stands for")
	f.Comment("(evokore.cue `jargon`); query expansion stems them when used.")
	f.Var().Id("jargon").Op("=").Map(jen.String()).Index().String().Values(jen.DictFunc(func(d jen.Dict) {
		for _, w := range slices.Sorted(maps.Keys(s.Jargon)) {
			d[jen.Lit(w)] = stringList(s.Jargon[w])
		}
	}))
	return f
}

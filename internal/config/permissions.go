package config

import (
	"errors"
	"io/fs"

	"cuelang.org/go/cue"

	"github.com/evokore/evokore/schema"
)

// Permission levels as written in permissions.yml.
const (
	LevelAllow           = "allow"
	LevelRequireApproval = "require_approval"
	LevelDeny            = "deny"
)

// Permissions is permissions.yml after validation.
type Permissions struct {
	// File is where the permissions were read from; Missing is true when
	// no file existed there and the shipped roles and rules apply.
	File    string
	Missing bool

	// Roles are in file order.
	Roles      []Role
	ActiveRole string
	// Rules are the flat rules: full tool name to level.
	Rules map[string]string

	pos positions
}

// Role is one named role.
type Role struct {
	Name              string            `json:"-"`
	Description       string            `json:"description,omitempty"`
	DefaultPermission string            `json:"default_permission"`
	Overrides         map[string]string `json:"overrides,omitempty"`
	// Skills allow or deny skills by name (a child's prefixed, as its
	// tools are) or category/name; a skill not named is allowed.
	Skills map[string]string `json:"skills,omitempty"`
}

// Role returns the role with the given name.
func (p *Permissions) Role(name string) (*Role, bool) {
	for i := range p.Roles {
		if p.Roles[i].Name == name {
			return &p.Roles[i], true
		}
	}
	return nil, false
}

// Pos returns where the value at path (such as "rules", tool) was written.
func (p *Permissions) Pos(path ...string) Position { return p.pos.at(p.File, path...) }

// KeyPos returns where the key of the field at path was written.
func (p *Permissions) KeyPos(path ...string) Position { return p.pos.key(path...) }

// LoadPermissions reads permissions.yml. When the file does not exist it
// returns shipped (the caller's compiled-in defaults) marked Missing.
func LoadPermissions(file string, shipped Permissions) (*Permissions, error) {
	src, err := ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		shipped.File, shipped.Missing = file, true
		return &shipped, nil
	}
	if err != nil {
		return nil, Diagnostics{ReadProblem(file, err)}
	}
	p, ds := ParsePermissions(file, src)
	if ds != nil {
		return nil, ds
	}
	return p, nil
}

// ParsePermissions validates and decodes the bytes of a permissions.yml.
func ParsePermissions(file string, src []byte) (*Permissions, Diagnostics) {
	doc, ds := validate(file, src, formatYAML, schema.Permissions)
	if ds != nil {
		return nil, ds
	}
	p := &Permissions{File: file, pos: doc.pos}
	var active *string
	err := errors.Join(
		doc.fields("roles", func(name string, v cue.Value) error {
			r := Role{Name: name}
			if err := v.Decode(&r); err != nil {
				return err
			}
			p.Roles = append(p.Roles, r)
			return nil
		}),
		doc.decode("active_role", &active),
		doc.decode("rules", &p.Rules),
	)
	if err != nil {
		return nil, doc.decodeErr(err)
	}
	if active != nil {
		p.ActiveRole = *active
	}
	return p, nil
}

// CheckPermissions reads permissions.yml for a report: every section, and
// every role, is checked on its own, so the parts that are right are
// returned (for the checks that span files) beside every problem. A
// missing file gives shipped marked Missing. p is nil only when the file
// could not be read or parsed at all. The router itself uses
// [LoadPermissions], which takes a file whole or not at all.
func CheckPermissions(file string, shipped Permissions) (*Permissions, Diagnostics) {
	src, err := ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		shipped.File, shipped.Missing = file, true
		return &shipped, nil
	}
	if err != nil {
		return nil, Diagnostics{ReadProblem(file, err)}
	}
	var p *Permissions
	ds := withEvaluator(file, func(ev *evaluator) Diagnostics {
		data, pos, ds := ev.parse(file, src, formatYAML)
		if ds != nil {
			return ds
		}
		p = &Permissions{File: file, pos: pos}
		def := ev.definition(schema.Permissions)
		it, err := data.Fields()
		if err != nil {
			return Diagnostics{errAt(pos.at(file), "schema", "%v", err)}
		}
		var out Diagnostics
		for it.Next() {
			label, v := it.Selector().Unquoted(), it.Value()
			if !def.Allows(cue.Str(label)) {
				out = append(out, errAt(pos.key(label), "schema", "%s: field not allowed", label))
				continue
			}
			if label == "roles" && v.IncompleteKind() == cue.StructKind {
				roles, _ := v.Fields()
				for roles.Next() {
					name := roles.Selector().Unquoted()
					value, rds := check(file, data, roles.Value(), ev.definition(schema.Role), []string{label, name}, pos)
					out = append(out, rds...)
					r := Role{Name: name}
					if rds == nil && value.Decode(&r) == nil {
						p.Roles = append(p.Roles, r)
					}
				}
				continue
			}
			value, sds := check(file, data, v, schemaField(def, label), []string{label}, pos)
			if sds != nil {
				out = append(out, sds...)
				continue
			}
			switch label {
			case "active_role":
				var active *string
				if value.Decode(&active) == nil && active != nil {
					p.ActiveRole = *active
				}
			case "rules":
				_ = value.Decode(&p.Rules)
			}
		}
		return out
	})
	ds.Sort()
	return p, ds
}

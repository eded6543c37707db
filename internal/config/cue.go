package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
	cuejson "cuelang.org/go/encoding/json"
	cueyaml "cuelang.org/go/encoding/yaml"

	"github.com/evokore/evokore/schema"
)

// evaluator holds the compiled schema package. CUE values of one context
// must not be evaluated concurrently, and loading is rare (start-up,
// reloads, vet), so one mutex guards every use.
type evaluator struct {
	mu     sync.Mutex
	ctx    *cue.Context
	schema cue.Value
}

var loadEvaluator = sync.OnceValues(buildEvaluator)

// Prepare compiles the embedded schema ahead of the first file it checks.
// A command that is about to read its configuration calls it on a
// goroutine, so that the compilation (the largest piece of evokore's own
// start-up work) overlaps what it does before reading.
func Prepare() { _, _ = loadEvaluator() }

// buildEvaluator compiles the embedded schema package.
func buildEvaluator() (*evaluator, error) {
	inst, err := schemaInstance()
	if err != nil {
		return nil, fmt.Errorf("load embedded schema: %w", err)
	}
	ctx := cuecontext.New()
	v := ctx.BuildInstance(inst)
	if err := v.Err(); err != nil {
		return nil, fmt.Errorf("build embedded schema: %w", err)
	}
	return &evaluator{ctx: ctx, schema: v}, nil
}

// schemaInstance assembles the embedded schema package from its files
// directly, without their comments (nothing reads them at run time, and
// keeping them costs a third of the parse). The package is one directory of files that import nothing,
// so cue/load's module, registry and import resolution are not needed:
// parsing the files ourselves halves the cost of building the evaluator
// and keeps CUE's module registry client (OCI, digests, protobuf text
// format) out of the binary (see docs/decisions.md, "Startup").
func schemaInstance() (*build.Instance, error) {
	entries, err := fs.ReadDir(schema.FS, ".")
	if err != nil {
		return nil, err
	}
	inst := build.NewContext().NewInstance("", nil)
	for _, e := range entries {
		if e.IsDir() || path.Ext(e.Name()) != ".cue" {
			continue
		}
		src, err := fs.ReadFile(schema.FS, e.Name())
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(path.Join("schema", e.Name()), src)
		if err != nil {
			return nil, err
		}
		if err := inst.AddSyntax(f); err != nil {
			return nil, err
		}
	}
	if inst.Err != nil {
		return nil, inst.Err
	}
	return inst, nil
}

// format is how a file's bytes are written.
type format int

const (
	formatJSON format = iota
	formatYAML
	formatCUE
)

// document is one file after validation: the data unified with its
// definition, and the positions of every value the data wrote.
type document struct {
	file  string
	value cue.Value
	pos   positions
}

// validate parses src as fm, unifies it with the schema definition def and
// checks that the result is concrete. Every problem becomes a Diagnostic
// positioned in file.
func validate(file string, src []byte, fm format, def string) (doc *document, ds Diagnostics) {
	ds = withEvaluator(file, func(ev *evaluator) Diagnostics {
		data, pos, ds := ev.parse(file, src, fm)
		if ds != nil {
			return ds
		}
		value, ds := check(file, data, data, ev.definition(def), nil, pos)
		if ds != nil {
			return ds
		}
		doc = &document{file: file, value: value, pos: pos}
		return nil
	})
	if ds != nil {
		return nil, ds
	}
	return doc, nil
}

// withEvaluator runs fn holding the evaluator. A panic inside CUE becomes
// a diagnostic: a parser bug must not take the router down with a user's
// file.
func withEvaluator(file string, fn func(ev *evaluator) Diagnostics) (ds Diagnostics) {
	ev, err := loadEvaluator()
	if err != nil {
		// The schema is embedded and tested; this is a build defect.
		panic(err)
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			ds = Diagnostics{errAt(Position{File: file}, "syntax", "cannot parse the file: %v", r)}
		}
	}()
	return fn(ev)
}

// definition returns the schema definition named def, such as "#Server".
func (ev *evaluator) definition(def string) cue.Value {
	return ev.schema.LookupPath(cue.MakePath(cue.Def(def)))
}

// parse reads src as fm into a CUE value holding a mapping, with the
// positions of everything it wrote.
func (ev *evaluator) parse(file string, src []byte, fm format) (cue.Value, positions, Diagnostics) {
	var data cue.Value
	switch fm {
	case formatJSON:
		if !json.Valid(src) {
			return data, positions{}, jsonSyntax(file, src)
		}
		expr, err := cuejson.Extract(file, src)
		if err != nil {
			return data, positions{}, fromCUE(file, err, "syntax", cue.Value{}, positions{})
		}
		data = ev.ctx.BuildExpr(expr)
	case formatYAML:
		src = unixNewlines(src)
		if ds := checkYAML(file, src); ds != nil {
			return data, positions{}, ds
		}
		if len(bytes.TrimSpace(src)) == 0 {
			// An empty YAML document is an empty mapping, not null.
			src = []byte("{}")
		}
		f, err := cueyaml.Extract(file, src)
		if err != nil {
			return data, positions{}, fromCUE(file, err, "syntax", cue.Value{}, positions{})
		}
		if isNullDocument(f) {
			data = ev.ctx.CompileString("{}", cue.Filename(file))
		} else {
			data = ev.ctx.BuildFile(f)
		}
	case formatCUE:
		data = ev.ctx.CompileBytes(src, cue.Filename(file))
	}
	pos := collectPositions(data)
	if err := data.Err(); err != nil {
		return data, pos, fromCUE(file, err, "schema", data, pos)
	}
	if k := data.IncompleteKind(); k == cue.TopKind {
		data = ev.ctx.CompileString("{}", cue.Filename(file)) // only comments
	} else if k != cue.StructKind {
		return data, pos, Diagnostics{errAt(pos.at(file), "schema", "the file must hold a mapping of keys to values at the top level, not %s", k)}
	}
	return data, pos, nil
}

// check unifies data, the value at path of the file root, with the schema
// def and validates the result as concrete.
func check(file string, root, data, def cue.Value, path []string, pos positions) (cue.Value, Diagnostics) {
	value := data.Unify(def)
	if err := value.Validate(cue.Concrete(true), cue.Hidden(true)); err != nil {
		// CUE reports a misspelt key only when nothing else near it is
		// wrong; find every one, so all problems come out in one run.
		unknown := notAllowed(data, def, pos, path)
		ds := fromCUE(file, err, "schema", root, pos)
		ds = slices.DeleteFunc(ds, func(d Diagnostic) bool {
			for _, u := range unknown {
				if d.Message == u.Message || strings.HasPrefix(d.Message, u.path+".") {
					return true
				}
			}
			return false
		})
		for _, u := range unknown {
			ds = append(ds, u.Diagnostic)
		}
		ds.Sort()
		return value, ds
	}
	return value, nil
}

// unknownField is a key the schema does not allow.
type unknownField struct {
	Diagnostic
	path string
}

// notAllowed walks the user's data beside the schema definition and
// reports every key a closed struct does not allow, at the key. It does
// not descend into a key it reports, nor into values whose schema is a
// disjunction or open. path is where data sits in the file.
func notAllowed(data, def cue.Value, pos positions, path []string) []unknownField {
	var out []unknownField
	var walk func(v, d cue.Value, path []string)
	walk = func(v, d cue.Value, path []string) {
		switch v.IncompleteKind() {
		case cue.StructKind:
			if d.IncompleteKind() != cue.StructKind {
				return
			}
			it, err := v.Fields()
			if err != nil {
				return
			}
			for it.Next() {
				label := it.Selector().Unquoted()
				child := append(slices.Clone(path), label)
				if !d.Allows(cue.Str(label)) {
					p := strings.Join(child, ".")
					out = append(out, unknownField{Diagnostic: errAt(pos.key(child...), "schema", "%s: field not allowed", p), path: p})
					continue
				}
				walk(it.Value(), schemaField(d, label), child)
			}
		case cue.ListKind:
			if d.IncompleteKind() != cue.ListKind {
				return
			}
			elem := d.LookupPath(cue.MakePath(cue.AnyIndex))
			it, err := v.List()
			if err != nil {
				return
			}
			for i := 0; it.Next(); i++ {
				walk(it.Value(), elem, append(slices.Clone(path), fmt.Sprint(i)))
			}
		}
	}
	walk(data, def, path)
	return out
}

// schemaField is the schema of field label of struct schema d: the field
// itself (required or optional) or the pattern that applies to it.
func schemaField(d cue.Value, label string) cue.Value {
	for _, sel := range []cue.Selector{cue.Str(label), cue.Str(label).Optional(), cue.AnyString} {
		if f := d.LookupPath(cue.MakePath(sel)); f.Exists() {
			return f
		}
	}
	return cue.Value{}
}

// selectorPath builds a CUE path from labels, reading numbers as list
// indexes.
func selectorPath(path []string) cue.Path {
	sels := make([]cue.Selector, len(path))
	for i, p := range path {
		sels[i] = cue.Str(p)
		if strings.HasPrefix(p, "_") {
			sels[i] = cue.Hid(p, "_")
		}
		if n, err := strconv.Atoi(p); err == nil {
			sels[i] = cue.Index(n)
		}
	}
	return cue.MakePath(sels...)
}

// unixNewlines turns CRLF and lone CR line ends into LF: YAML allows all
// three, and the parser underneath handles only the first two reliably.
func unixNewlines(src []byte) []byte {
	if !bytes.ContainsRune(src, '\r') {
		return src
	}
	src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(src, []byte("\r"), []byte("\n"))
}

// jsonSyntax positions a JSON syntax error by line and column, which
// encoding/json only gives as a byte offset.
func jsonSyntax(file string, src []byte) Diagnostics {
	err := json.Unmarshal(src, new(any))
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return Diagnostics{errAt(Position{File: file}, "syntax", "invalid JSON: %v", err)}
	}
	return Diagnostics{errAt(offsetPosition(file, src, se.Offset), "syntax", "invalid JSON: %s", se.Error())}
}

// offsetPosition converts a byte offset into a 1-based line and column.
// encoding/json reports the offset just past the offending byte.
func offsetPosition(file string, src []byte, offset int64) Position {
	offset = min(max(offset-1, 0), int64(len(src)))
	before := src[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return Position{File: file, Line: line, Col: col}
}

// isNullDocument reports whether a YAML file holds only comments or null.
func isNullDocument(f *ast.File) bool {
	if len(f.Decls) != 1 {
		return len(f.Decls) == 0
	}
	e, ok := f.Decls[0].(*ast.EmbedDecl)
	if !ok {
		return false
	}
	lit, ok := e.Expr.(*ast.BasicLit)
	return ok && lit.Kind == token.NULL
}

// fromCUE turns a CUE error list into diagnostics, choosing for each the
// position inside the user's file over positions inside the schema. data,
// when valid, is the user's value alone; it positions errors CUE leaves
// unpositioned and names the offending value of a failed disjunction.
func fromCUE(file string, err error, code string, data cue.Value, pos positions) Diagnostics {
	type group struct {
		path    []string
		msgs    []cueerrors.Error
		disjunc bool
	}
	var groups []*group
	byPath := map[string]*group{}
	for _, e := range cueerrors.Errors(err) {
		key := pathKey(e.Path()...)
		g := byPath[key]
		if g == nil {
			g = &group{path: e.Path()}
			byPath[key] = g
			groups = append(groups, g)
		}
		format, _ := e.Msg()
		if strings.Contains(format, "errors in empty disjunction") {
			g.disjunc = true
		}
		g.msgs = append(g.msgs, e)
	}

	var out Diagnostics
	seen := map[string]bool{}
	add := func(d Diagnostic) {
		if key := d.String(); !seen[key] {
			seen[key] = true
			out = append(out, d)
		}
	}
	for _, g := range groups {
		prefix := ""
		if len(g.path) > 0 {
			prefix = strings.Join(g.path, ".") + ": "
		}
		if g.disjunc && data.Exists() {
			got, want := describeDisjunction(data, g.path, g.msgs)
			p := pos.at(file, g.path...)
			for _, e := range g.msgs {
				if q := pickPosition(file, e); q.Line > 0 {
					p = q
					break
				}
			}
			add(errAt(p, code, "%s%s is not allowed; want %s", prefix, got, want))
			continue
		}
		for _, e := range g.msgs {
			p := pickPosition(file, e)
			if p.Line == 0 {
				p = pos.at(file, g.path...)
			}
			format, args := e.Msg()
			msg := fmt.Sprintf(format, args...)
			if strings.TrimSpace(msg) == "" || strings.Contains(msg, "%!") {
				msg = e.Error()
			}
			// Parsers report plain "file:line: message" errors.
			if m := linePrefixed().FindStringSubmatch(msg); m != nil && p.Line == 0 {
				p.Line, _ = strconv.Atoi(m[2])
				msg = m[3]
			}
			add(errAt(p, code, "%s%s", prefix, msg))
		}
	}
	if len(out) == 0 {
		out = append(out, errAt(Position{File: file}, code, "%v", err))
	}
	out.Sort()
	return out
}

// describeDisjunction renders the value the user wrote at path and the
// alternatives the schema offered, from CUE's per-branch conflicts.
func describeDisjunction(data cue.Value, path []string, errs []cueerrors.Error) (got, want string) {
	v := data.LookupPath(selectorPath(path))
	if v.Err() == nil {
		got = fmt.Sprint(v)
	}
	// Each branch reports "conflicting values A and B"; the value the user
	// wrote is the one every branch names.
	counts := map[string]int{}
	conflicts := 0
	for _, e := range errs {
		format, args := e.Msg()
		if !strings.HasPrefix(format, "conflicting values") {
			continue
		}
		conflicts++
		for _, a := range args {
			counts[fmt.Sprint(a)]++
		}
	}
	if got == "" {
		for s, n := range counts {
			if n == conflicts {
				got = s
			}
		}
	}
	var alts []string
	for s := range counts {
		if s != got {
			alts = append(alts, s)
		}
	}
	slices.Sort(alts)
	switch {
	case len(alts) == 0:
		return got, "a value of another shape"
	case len(alts) > 12:
		return got, "one of " + strings.Join(alts[:12], ", ") + fmt.Sprintf(", ... (%d in all)", len(alts))
	}
	return got, "one of " + strings.Join(alts, ", ")
}

func pickPosition(file string, e cueerrors.Error) Position {
	candidates := append([]token.Pos{e.Position()}, e.InputPositions()...)
	for _, p := range candidates {
		if p.IsValid() && p.Filename() == file {
			return Position{File: file, Line: p.Line(), Col: p.Column()}
		}
	}
	return Position{File: file}
}

var linePrefixed = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*):(\d+): (.*)$`) })

// positions maps a path inside a data file to where it was written: the
// value (what a wrong value is reported at) and, for a field, its key
// (what a wrong name is reported at).
type positions struct {
	file   string
	values map[string]Position
	keys   map[string]Position
}

func pathKey(elems ...string) string { return strings.Join(elems, "\x1f") }

// at returns the position of the value at path, or of its closest written
// parent, or the file itself.
func (ps positions) at(file string, elems ...string) Position {
	return ps.lookup(ps.values, file, elems)
}

// key returns the position of the key of the field at path, falling back
// like at.
func (ps positions) key(elems ...string) Position {
	if p, ok := ps.keys[pathKey(elems...)]; ok {
		return p
	}
	return ps.lookup(ps.values, ps.file, elems)
}

func (ps positions) lookup(m map[string]Position, file string, elems []string) Position {
	for n := len(elems); n >= 0; n-- {
		if p, ok := m[pathKey(elems[:n]...)]; ok {
			return p
		}
	}
	return Position{File: file}
}

func toPosition(p token.Pos) Position {
	return Position{File: p.Filename(), Line: p.Line(), Col: p.Column()}
}

func collectPositions(v cue.Value) positions {
	ps := positions{values: map[string]Position{}, keys: map[string]Position{}}
	if p := v.Pos(); p.IsValid() {
		ps.file = p.Filename()
	}
	var walk func(v cue.Value, path []string)
	walk = func(v cue.Value, path []string) {
		k := pathKey(path...)
		if f, ok := v.Source().(*ast.Field); ok {
			ps.keys[k] = toPosition(f.Label.Pos())
			if f.Value != nil && f.Value.Pos().IsValid() {
				ps.values[k] = toPosition(f.Value.Pos())
			}
		}
		if _, ok := ps.values[k]; !ok {
			if p := v.Pos(); p.IsValid() {
				ps.values[k] = toPosition(p)
			}
		}
		switch v.IncompleteKind() {
		case cue.StructKind:
			it, err := v.Fields(cue.Optional(true))
			if err != nil {
				return
			}
			for it.Next() {
				walk(it.Value(), append(path, it.Selector().Unquoted()))
			}
		case cue.ListKind:
			it, err := v.List()
			if err != nil {
				return
			}
			for i := 0; it.Next(); i++ {
				walk(it.Value(), append(path, fmt.Sprint(i)))
			}
		}
	}
	walk(v, nil)
	return ps
}

// fields calls fn for each field of the struct at path, in the order the
// file wrote them.
func (d *document) fields(p string, fn func(label string, v cue.Value) error) error {
	v := d.value.LookupPath(cue.ParsePath(p))
	if !v.Exists() {
		return nil
	}
	it, err := v.Fields()
	if err != nil {
		return err
	}
	for it.Next() {
		if err := fn(it.Selector().Unquoted(), it.Value()); err != nil {
			return err
		}
	}
	return nil
}

// decode decodes the value at path into x; a missing path leaves x alone.
func (d *document) decode(p string, x any) error {
	v := d.value
	if p != "" {
		v = v.LookupPath(cue.ParsePath(p))
	}
	if !v.Exists() {
		return nil
	}
	return v.Decode(x)
}

// decodeErr reports a decode failure, which means the schema and the Go
// types disagree; it is positioned at the file so the user still sees where.
func (d *document) decodeErr(err error) Diagnostics {
	return Diagnostics{errAt(Position{File: d.file}, "decode", "%v", err)}
}

package hooks

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// A shell word resolved as far as the line shows it: quotes and escapes
// removed, $'…' decoded, brace lists expanded, $IFS split, variables the
// line set and sh -c's positional parameters substituted; what stays
// unknown ($X, $(…), ${X:-…}) is kept as written and its place in the
// word recorded, so the judges can tell what they cannot see.

// field is one word after expansion.
type field struct {
	text string
	unk  span
}

// word resolves a word as one field (an assignment's value, a
// redirection's target), with no splitting.
func (w *walker) word(word *syntax.Word) field {
	var b fieldBuilder
	for _, part := range word.Parts {
		b.add(w.part(part, false), false)
	}
	return field{b.cur.String(), b.unk}
}

// fields resolves a command's word into the fields it expands to: brace
// lists expand, and an unquoted $IFS (or a known value with spaces)
// splits it.
func (w *walker) fields(word *syntax.Word) []field {
	var out []field
	words := []*syntax.Word{word}
	if syntax.SplitBraces(word) {
		words = braces(word)
	}
	for _, wd := range words {
		var b fieldBuilder
		for _, part := range wd.Parts {
			_, quoted := part.(*syntax.DblQuoted)
			_, single := part.(*syntax.SglQuoted)
			b.add(w.part(part, false), !quoted && !single)
			b.quoted = b.quoted || quoted || single
		}
		out = append(out, b.done()...)
	}
	return out
}

// maxBraceWords bounds what one brace list expands to; a longer one is
// judged as written.
const maxBraceWords = 256

// braces expands a word's brace lists, up to maxBraceWords words.
func braces(word *syntax.Word) []*syntax.Word {
	var out []*syntax.Word
	for w, err := range expand.BracesSeq(nil, word) {
		if err != nil || len(out) == maxBraceWords {
			return []*syntax.Word{{Parts: []syntax.WordPart{&syntax.Lit{Value: source(word)}}}}
		}
		out = append(out, w)
	}
	return out
}

// fieldBuilder gathers the parts of a word into fields.
type fieldBuilder struct {
	out    []field
	cur    strings.Builder
	unk    span
	quoted bool
}

// add appends one part; split says an unquoted expansion's separators
// (marked by the part's split) end the field.
func (b *fieldBuilder) add(p part, split bool) {
	if !split || !p.split {
		b.write(p.text, p.unk)
		return
	}
	texts := strings.Fields(p.text)
	if len(texts) == 0 || strings.TrimLeft(p.text, " \t\n") != p.text {
		b.flush()
	}
	for i, t := range texts {
		if i > 0 {
			b.flush()
		}
		b.write(t, p.unk)
	}
	if len(texts) > 0 && strings.TrimRight(p.text, " \t\n") != p.text {
		b.flush()
	}
}

// write appends text whose unresolved part is unk (relative to text).
func (b *fieldBuilder) write(text string, unk span) {
	if unk.unknown() {
		off := b.cur.Len()
		to := min(off+unk.to, off+len(text))
		if b.unk.unknown() {
			b.unk.to = to
		} else {
			b.unk = span{off + unk.from, to}
		}
	}
	b.cur.WriteString(text)
}

func (b *fieldBuilder) flush() {
	if b.cur.Len() > 0 || b.quoted {
		b.out = append(b.out, field{b.cur.String(), b.unk})
	}
	b.cur.Reset()
	b.unk = known
	b.quoted = false
}

func (b *fieldBuilder) done() []field {
	if b.cur.Len() > 0 || b.quoted {
		b.flush()
	}
	return b.out
}

// part is one word part resolved: its text, where in it what
// damage-control could not resolve sits, and whether unquoted it splits
// into fields.
type part struct {
	text  string
	unk   span
	split bool
}

// opaque is a part damage-control cannot resolve, as written.
func opaque(text string) part { return part{text: text, unk: span{0, len(text)}} }

// part resolves one word part; inQuotes is set inside "…".
func (w *walker) part(wp syntax.WordPart, inQuotes bool) part {
	switch p := wp.(type) {
	case *syntax.Lit:
		return part{text: unescape(p.Value, inQuotes)}
	case *syntax.SglQuoted:
		if p.Dollar {
			s, _, _ := expand.Format(&expand.Config{}, p.Value, nil)
			return part{text: s}
		}
		return part{text: p.Value}
	case *syntax.DblQuoted:
		var b fieldBuilder
		for _, inner := range p.Parts {
			b.add(w.part(inner, true), false)
		}
		return part{text: b.cur.String(), unk: b.unk}
	case *syntax.ParamExp:
		return w.param(p, inQuotes)
	case *syntax.CmdSubst:
		return w.cmdSubst(p)
	case *syntax.ProcSubst:
		w.sub().stmts(p.Stmts)
		return part{text: placeholder(p.Op.String(), p.Stmts)}
	case *syntax.ArithmExp:
		w.substitutions(p)
		return opaque("$((…))")
	case *syntax.ExtGlob:
		return part{text: p.Op.String() + p.Pattern.Value + ")"}
	}
	return opaque(source(wp))
}

// unescape removes the backslashes of unquoted (or, inQuotes, double
// quoted) text.
func unescape(s string, inQuotes bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
			i++
		case !inQuotes || strings.IndexByte("$`\"\\", next) >= 0:
			b.WriteByte(next)
			i++
		default:
			b.WriteByte('\\')
		}
	}
	return b.String()
}

// param resolves a parameter expansion: $IFS splits, the positional
// parameters of sh -c and variables the line set are substituted,
// $HOME and $EVOKORE_HOME stay as written (the path rules know them);
// anything else is unknown.
func (w *walker) param(p *syntax.ParamExp, inQuotes bool) part {
	if p.Param == nil || !simpleParam(p) {
		w.substitutions(p)
		return opaque(source(p))
	}
	name := p.Param.Value
	switch {
	case name == "IFS":
		if inQuotes {
			return part{text: " "}
		}
		return part{text: " ", split: true}
	case name == "HOME" || name == "EVOKORE_HOME":
		return part{text: source(p)}
	case isPositional(name):
		return part{text: w.positional(name), split: true}
	}
	if v, ok := w.vars[name]; ok {
		return part{text: v, split: true}
	}
	return opaque(source(p))
}

func simpleParam(p *syntax.ParamExp) bool {
	return !p.Excl && !p.Length && !p.Width && p.Index == nil && p.Slice == nil && p.Repl == nil &&
		p.Names == 0 && p.Exp == nil && p.NestedParam == nil && len(p.Modifiers) == 0
}

func isPositional(name string) bool {
	return name == "@" || name == "*" || (name != "" && strings.Trim(name, "0123456789") == "")
}

// positional is a positional parameter's value: sh -c's arguments, and
// empty at the top (the Bash tool's shell has none), where $0 is bash.
func (w *walker) positional(name string) string {
	args := w.args
	if args == nil {
		if name == "0" {
			return "bash"
		}
		return ""
	}
	if name == "@" || name == "*" {
		if len(args) < 2 {
			return ""
		}
		return strings.Join(args[1:], " ")
	}
	i := 0
	fmt.Sscan(name, &i)
	if i < len(args) {
		return args[i]
	}
	return ""
}

// cmdSubst walks a command substitution; its value is known when it is
// a single echo or printf of known words ($(echo rm)), else it stands
// as a placeholder naming the command it runs, "$(curl)".
func (w *walker) cmdSubst(cs *syntax.CmdSubst) part {
	before := len(w.p.pipelines)
	w.sub().stmts(cs.Stmts)
	if len(cs.Stmts) == 1 && len(w.p.pipelines) == before+1 {
		if pl := w.p.pipelines[before]; len(pl) == 1 {
			if out := printed(pl[0]); out != nil && (pl[0].name() == "echo" || pl[0].name() == "printf") {
				return part{text: strings.TrimRight(*out, "\n"), split: true}
			}
		}
	}
	return opaque(placeholder("$(", cs.Stmts))
}

// placeholder stands for a substitution in a word: its sigil and the name
// of the command it runs, as in "$(curl)".
func placeholder(open string, stmts []*syntax.Stmt) string {
	name := ""
	if len(stmts) > 0 {
		s := stmts[0]
		for {
			b, ok := s.Cmd.(*syntax.BinaryCmd)
			if !ok {
				break
			}
			s = b.X
		}
		if call, ok := s.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 {
			name = filepath.Base(unescape(call.Args[0].Lit(), false))
			if name == "." {
				name = ""
			}
		}
	}
	if len(name) > 64 {
		name = name[:64]
	}
	if !strings.HasSuffix(open, "(") {
		open += "("
	}
	return open + name + ")"
}

// source is a node as written.
func source(n syntax.Node) string {
	var b bytes.Buffer
	if err := syntax.NewPrinter(syntax.Minify(true)).Print(&b, n); err != nil {
		return "$(?)"
	}
	return b.String()
}

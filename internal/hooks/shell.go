package hooks

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// A Bash command line is judged from its syntax tree (mvdan.cc/sh):
// every simple command it can run, wherever it sits (pipelines, lists,
// compound commands, function bodies, $(…), <(…), heredocs fed to a
// shell), with quotes removed, $IFS and brace lists expanded, variables
// given a literal value earlier in the line substituted, and wrappers
// (sudo, env, xargs, script, …) peeled off. Code handed to another shell
// or interpreter (sh -c, eval, python -c, echo … | base64 -d | sh) is
// read too, one level deeper. Statements are parsed one at a time, so
// whatever precedes a syntax error is still judged; the error itself
// asks the user.

// maxDepth bounds how deep nested code (sh -c, eval, $(…)) is followed;
// deeper nesting is itself suspicious and is judged as "ask".
const maxDepth = 8

// maxNesting bounds the brackets a line may nest before it is parsed:
// the parser's time grows with the square of the nesting (10,000 "$("
// take 0.8 s), and no real command nests a hundred deep.
const maxNesting = 100

// nesting is how deep the brackets of src nest, quotes ignored.
func nesting(src string) int {
	depth, most := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{':
			depth++
			most = max(most, depth)
		case ')', '}':
			depth = max(0, depth-1)
		}
	}
	return most
}

// maxLoopItems bounds the values a for loop's body is judged with.
const maxLoopItems = 8

// span is where in a word the expansions damage-control cannot resolve
// sit; empty when the word is fully known.
type span struct{ from, to int }

var known = span{}

func (s span) unknown() bool { return s.to > s.from }

// shellCommand is one simple command: its words after quote removal and
// with wrappers (sudo, env, sh -c, …) peeled off.
type shellCommand struct {
	words []string
	// unk says, per word, where an unresolved expansion ($X, $(…)) sits.
	unk    []span
	redirs []redirection
	// stdin is the text the command reads when the line shows it (a
	// heredoc, a herestring, echo … | cmd); hasStdin says whether it does.
	stdin    string
	hasStdin bool
	// fed is set when a wrapper (xargs, find -exec, parallel) adds
	// arguments damage-control cannot see.
	fed bool
	// pty is set when a wrapper runs the command on a pseudo-terminal
	// (script, unbuffer, expect, socat, tmux, pty.spawn).
	pty bool
	// dir is the working directory a cd earlier in the line moved to:
	// "" for the hook's own, unknownDir when cd's argument is unresolved.
	dir string
}

// unknownDir marks a working directory damage-control cannot resolve.
const unknownDir = "\x00?"

// redirection is one redirection of a command.
type redirection struct {
	op     string
	target string
	unk    span
}

// writes reports whether the redirection writes its target.
func (r redirection) writes() bool {
	return strings.Contains(r.op, ">") && !strings.HasSuffix(r.op, "&")
}

// String joins the words with spaces; whitespace inside a word (a quoted
// commit message) becomes U+00A0, which the rules' \s does not match, so
// "git commit -m 'git push -f main'" is not read as a push. Redirections
// follow as "> target".
func (c shellCommand) String() string {
	words := make([]string, 0, len(c.words)+2*len(c.redirs))
	for _, w := range c.words {
		words = append(words, hardSpaces(w))
	}
	for _, r := range c.redirs {
		words = append(words, r.op, hardSpaces(r.target))
	}
	return strings.Join(words, " ")
}

func hardSpaces(w string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\v' {
			return '\u00a0'
		}
		return r
	}, w)
}

// name is the command's name ("" for a bare redirection).
func (c shellCommand) name() string {
	if len(c.words) == 0 {
		return ""
	}
	return c.words[0]
}

// parsed is a Bash command line taken apart: its pipelines of simple
// commands, including those nested in substitutions, sh -c strings, eval
// arguments, interpreter one-liners and decoded base64 fed to a shell.
type parsed struct {
	pipelines [][]shellCommand
	// tooDeep is set when nesting went past maxDepth.
	tooDeep bool
	// unseen says why some code that runs could not be read: a syntax
	// error, or code built from values damage-control cannot resolve.
	unseen []string
}

// parseShell takes a command line apart. It never fails: what it cannot
// parse is reported in unseen.
func parseShell(s string) *parsed {
	p := &parsed{}
	w := &walker{p: p, vars: map[string]string{}}
	w.script(s, "the command")
	return p
}

// views are the strings the rules are matched against: each simple
// command, and each pipeline of two or more commands.
func (p *parsed) views() []string {
	var out []string
	for _, pl := range p.pipelines {
		parts := make([]string, 0, len(pl))
		for _, c := range pl {
			if len(c.words) > 0 {
				out = append(out, c.String())
				parts = append(parts, c.String())
			}
		}
		if len(parts) > 1 {
			out = append(out, strings.Join(parts, " | "))
		}
	}
	return out
}

func (p *parsed) commands() []shellCommand {
	var out []shellCommand
	for _, pl := range p.pipelines {
		out = append(out, pl...)
	}
	return out
}

// walker visits a syntax tree, keeping what the line has made known so
// far: variables set to literals, the positional parameters of sh -c,
// the working directory.
type walker struct {
	p     *parsed
	depth int
	vars  map[string]string
	// args are the positional parameters ($0 first); nil at the top,
	// where they are empty.
	args []string
	dir  string
	// pty marks the commands of code run on a pseudo-terminal.
	pty bool
}

// child is a walker for code one level deeper, run by another shell:
// it starts with no variables of the line's.
func (w *walker) child(args []string) *walker {
	return &walker{p: w.p, depth: w.depth + 1, vars: map[string]string{}, args: args, dir: w.dir, pty: w.pty}
}

// sub is a walker for a subshell: it sees the variables so far, and
// nothing it sets leaks out.
func (w *walker) sub() *walker {
	vars := make(map[string]string, len(w.vars))
	for k, v := range w.vars {
		vars[k] = v
	}
	return &walker{p: w.p, depth: w.depth + 1, vars: vars, args: w.args, dir: w.dir, pty: w.pty}
}

// script parses src statement by statement and walks each.
func (w *walker) script(src, what string) {
	if w.depth > maxDepth || nesting(src) > maxNesting {
		w.p.tooDeep = true
		return
	}
	parser := syntax.NewParser(syntax.KeepComments(false), syntax.Variant(syntax.LangBash))
	// The sequence is drained, never left early: after an error,
	// mvdan.cc/sh v3.14.1 yields again to a loop that has stopped, which
	// panics.
	reported := false
	for s, err := range parser.StmtsSeq(strings.NewReader(src)) {
		switch {
		case err != nil && !reported:
			reported = true
			w.p.unseen = append(w.p.unseen, fmt.Sprintf("%s does not parse as shell (%v), so what it runs cannot be judged", what, err))
		case err == nil && !w.p.tooDeep:
			w.stmt(s)
		}
	}
}

func (w *walker) stmts(list []*syntax.Stmt) {
	for _, s := range list {
		w.stmt(s)
	}
}

func (w *walker) stmt(s *syntax.Stmt) {
	if w.depth > maxDepth {
		w.p.tooDeep = true
		return
	}
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
		w.pipeline(flattenPipe(s))
		return
	}
	w.pipeline([]*syntax.Stmt{s})
}

// flattenPipe lists the statements of a pipeline, left to right.
func flattenPipe(s *syntax.Stmt) []*syntax.Stmt {
	b, ok := s.Cmd.(*syntax.BinaryCmd)
	if !ok || (b.Op != syntax.Pipe && b.Op != syntax.PipeAll) || len(s.Redirs) > 0 {
		return []*syntax.Stmt{s}
	}
	return append(flattenPipe(b.X), flattenPipe(b.Y)...)
}

// pipeline walks the statements of one pipeline; what a stage prints,
// when the line shows it, is the next stage's stdin.
func (w *walker) pipeline(stages []*syntax.Stmt) {
	var pl []shellCommand
	var out *string
	for _, s := range stages {
		if len(stages) > 1 {
			// Each stage of a pipeline runs in a subshell of its own.
			w = w.sub()
			w.depth--
		}
		c, printed := w.stage(s, out)
		pl = append(pl, c...)
		out = printed
	}
	if len(pl) > 0 {
		w.p.pipelines = append(w.p.pipelines, pl)
	}
}

// stage walks one statement; a simple command comes back for its
// pipeline, with what it prints when that is known.
func (w *walker) stage(s *syntax.Stmt, stdin *string) ([]shellCommand, *string) {
	redirs, heredoc := w.redirs(s.Redirs)
	if heredoc != nil {
		stdin = heredoc
	}
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok {
		w.compound(s.Cmd)
		if len(redirs) > 0 {
			return []shellCommand{{redirs: redirs, dir: w.dir}}, nil
		}
		return nil, nil
	}
	return w.call(call, redirs, stdin)
}

// compound walks a command that is not a simple one.
func (w *walker) compound(cmd syntax.Command) {
	switch c := cmd.(type) {
	case nil:
	case *syntax.BinaryCmd:
		w.stmt(c.X)
		w.stmt(c.Y)
	case *syntax.Block:
		w.stmts(c.Stmts)
	case *syntax.Subshell:
		w.sub().stmts(c.Stmts)
	case *syntax.IfClause:
		for ; c != nil; c = c.Else {
			w.stmts(c.Cond)
			w.stmts(c.Then)
		}
	case *syntax.WhileClause:
		w.stmts(c.Cond)
		w.stmts(c.Do)
	case *syntax.ForClause:
		w.loop(c)
	case *syntax.CaseClause:
		w.fields(c.Word)
		for _, item := range c.Items {
			w.stmts(item.Stmts)
		}
	case *syntax.FuncDecl:
		w.sub().stmt(c.Body)
	case *syntax.DeclClause:
		w.declare(c)
	case *syntax.TimeClause:
		if c.Stmt != nil {
			w.stmt(c.Stmt)
		}
	case *syntax.CoprocClause:
		w.stmt(c.Stmt)
	default:
		// Arithmetic and tests run no command, except through the
		// substitutions inside them.
		w.substitutions(cmd)
	}
}

// substitutions walks the command substitutions inside node.
func (w *walker) substitutions(node syntax.Node) {
	syntax.Walk(node, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			w.sub().stmts(n.Stmts)
			return false
		case *syntax.ProcSubst:
			w.sub().stmts(n.Stmts)
			return false
		}
		return true
	})
}

// loop walks a for loop's body once per literal item (up to
// maxLoopItems), else once with the variable unresolved.
func (w *walker) loop(c *syntax.ForClause) {
	it, ok := c.Loop.(*syntax.WordIter)
	if !ok {
		w.substitutions(c.Loop)
		w.stmts(c.Do)
		return
	}
	var items []field
	for _, word := range it.Items {
		items = append(items, w.fields(word)...)
	}
	name := it.Name.Value
	if len(items) == 0 || len(items) > maxLoopItems {
		delete(w.vars, name)
		w.stmts(c.Do)
		return
	}
	for _, f := range items {
		if f.unk.unknown() {
			delete(w.vars, name)
		} else {
			w.vars[name] = f.text
		}
		w.stmts(c.Do)
	}
}

// declare records export/declare/local/readonly assignments and judges
// the builtin like any command.
func (w *walker) declare(c *syntax.DeclClause) {
	words := []string{c.Variant.Value}
	unk := []span{known}
	for _, a := range c.Args {
		switch {
		case a.Name != nil:
			w.assign(a)
			words = append(words, a.Name.Value)
			unk = append(unk, known)
		case a.Value != nil:
			for _, f := range w.fields(a.Value) {
				words = append(words, f.text)
				unk = append(unk, f.unk)
			}
		}
	}
	w.p.pipelines = append(w.p.pipelines, []shellCommand{{words: words, unk: unk, dir: w.dir, pty: w.pty}})
}

// assign records a variable's value when it is a literal the line shows.
func (w *walker) assign(a *syntax.Assign) {
	if a.Name == nil {
		return
	}
	name := a.Name.Value
	if a.Value == nil || a.Array != nil || a.Index != nil || a.Append {
		delete(w.vars, name)
		if a.Array != nil {
			w.substitutions(a.Array)
		}
		return
	}
	f := w.word(a.Value)
	if f.unk.unknown() {
		delete(w.vars, name)
		return
	}
	w.vars[name] = f.text
}

// redirs resolves a statement's redirections; a heredoc or herestring
// comes back as the text it feeds the command.
func (w *walker) redirs(rs []*syntax.Redirect) ([]redirection, *string) {
	var out []redirection
	var stdin *string
	for _, r := range rs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if r.Hdoc != nil {
				text := w.document(r.Hdoc)
				stdin = &text
			}
			continue
		case syntax.WordHdoc:
			text := w.word(r.Word).text + "\n"
			stdin = &text
			continue
		}
		if r.Word == nil {
			continue
		}
		f := w.word(r.Word)
		op := r.Op.String()
		if (op == ">&" || op == "<&") && isFD(f.text) {
			continue
		}
		out = append(out, redirection{op: op, target: f.text, unk: f.unk})
	}
	return out, stdin
}

func isFD(s string) bool {
	return s == "-" || strings.TrimLeft(s, "0123456789") == "" || strings.TrimRight(s, "-") != s
}

// document is a heredoc's text, its substitutions walked.
func (w *walker) document(word *syntax.Word) string {
	var b strings.Builder
	for _, part := range word.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		default:
			f := w.part(part, true)
			b.WriteString(f.text)
		}
	}
	return b.String()
}

// call walks a simple command: its assignments, its words, the code it
// hands to another shell or interpreter; it comes back with what it
// prints when that is known (echo, printf, base64 -d of known text).
func (w *walker) call(call *syntax.CallExpr, redirs []redirection, stdin *string) ([]shellCommand, *string) {
	if len(call.Args) == 0 {
		for _, a := range call.Assigns {
			w.assign(a)
		}
		if len(redirs) == 0 {
			return nil, nil
		}
		return []shellCommand{{redirs: redirs, dir: w.dir}}, nil
	}
	for _, a := range call.Assigns {
		if a.Value != nil {
			w.word(a.Value) // substitutions in a prefix assignment run
		}
	}
	var words []string
	var unk []span
	for _, arg := range call.Args {
		for _, f := range w.fields(arg) {
			words = append(words, f.text)
			unk = append(unk, f.unk)
		}
	}
	if len(words) == 0 {
		return nil, nil
	}
	c := shellCommand{words: words, unk: unk, redirs: redirs, dir: w.dir, pty: w.pty}
	if stdin != nil {
		c.stdin, c.hasStdin = *stdin, true
	}
	cmds := w.unwrap(c)
	w.chdir(cmds[len(cmds)-1])
	return cmds, printed(cmds[len(cmds)-1])
}

// chdir follows cd and pushd for the commands after them.
func (w *walker) chdir(c shellCommand) {
	if c.name() != "cd" && c.name() != "pushd" {
		return
	}
	target := "~"
	if len(c.words) > 1 {
		target = c.words[len(c.words)-1]
		if c.unk[len(c.words)-1].unknown() || target == "-" {
			w.dir = unknownDir
			return
		}
	}
	if w.dir == unknownDir {
		if !strings.HasPrefix(target, "/") && !strings.HasPrefix(target, "~") && !strings.HasPrefix(target, "$HOME") {
			return
		}
		w.dir = ""
	}
	w.dir = joinDir(w.dir, target)
}

// joinDir is cd's target from dir ("" = the hook's working directory,
// kept relative so the matcher resolves it).
func joinDir(dir, target string) string {
	if strings.HasPrefix(target, "/") || strings.HasPrefix(target, "~") || strings.HasPrefix(target, "$") || dir == "" {
		return target
	}
	return filepath.Join(dir, target)
}

// printed is what a command prints, when damage-control knows it.
func printed(c shellCommand) *string {
	switch c.name() {
	case "echo", "printf":
		text, ok := echoed(c)
		if ok {
			return &text
		}
	case "base64":
		if c.hasStdin && hasOption(c.words[1:], "d", "--decode") || c.hasStdin && hasOption(c.words[1:], "D", "") {
			if b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(c.stdin)); err == nil {
				text := string(b)
				return &text
			}
		}
	case "cat":
		if c.hasStdin && len(c.words) == 1 {
			text := c.stdin
			return &text
		}
	}
	return nil
}

// echoed is what echo or printf prints, when every word is known.
func echoed(c shellCommand) (string, bool) {
	args := c.words[1:]
	for _, u := range c.unk[1:] {
		if u.unknown() {
			return "", false
		}
	}
	if c.name() == "printf" {
		if len(args) == 0 {
			return "", false
		}
		out, _, err := expand.Format(&expand.Config{}, args[0], args[1:])
		return out, err == nil
	}
	for len(args) > 0 && (args[0] == "-n" || args[0] == "-e" || args[0] == "-E" || args[0] == "-ne" || args[0] == "-en") {
		args = args[1:]
	}
	return strings.Join(args, " ") + "\n", true
}

// hasOption reports whether args hold the short option (alone or in a
// cluster) or the long one.
func hasOption(args []string, short, long string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if long != "" && (a == long || strings.HasPrefix(a, long+"=")) {
			return true
		}
		if short != "" && len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a[1:], short) {
			return true
		}
	}
	return false
}

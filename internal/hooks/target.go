package hooks

import (
	"regexp"
	"strings"
	"sync"
)

// target is a path a command touches.
type target struct {
	path string
	unk  span
	// write and del say what the command does to it; dir says it writes
	// files the line does not name into that directory (tar -C, unzip
	// -d, git -C … apply).
	write, del, dir bool
}

// deletes are the commands that remove their arguments.
var deletes = map[string]bool{"rm": true, "rmdir": true, "unlink": true, "shred": true, "del": true, "srm": true, "trash": true, "mv": true}

// writes are the commands that change their arguments.
var writes = map[string]bool{"rm": true, "rmdir": true, "unlink": true, "shred": true, "mv": true, "tee": true, "truncate": true,
	"chmod": true, "chown": true, "chgrp": true, "ln": true, "install": true, "touch": true, "sed": true, "perl": true, "rsync": true,
	"cp": true, "dd": true}

// editors write the files they open.
var editors = map[string]bool{"vi": true, "vim": true, "nvim": true, "ex": true, "view": true, "nano": true, "pico": true, "emacs": true,
	"ed": true, "micro": true, "joe": true, "kak": true, "hx": true, "helix": true, "mcedit": true, "ne": true, "jed": true, "gedit": true}

// targets lists the paths a command touches: its arguments (and the
// value of option=value words), its redirections, and what tar, unzip,
// git, sqlite3 and editors write.
func targets(c shellCommand) []target {
	var out []target
	for _, r := range c.redirs {
		out = append(out, target{path: r.target, unk: r.unk, write: r.writes()})
	}
	if len(c.words) == 0 {
		return out
	}
	name := c.name()
	inPlace := (name == "sed" || name == "perl") && hasInPlace(c.words)
	for i := 1; i < len(c.words); i++ {
		w := c.words[i]
		for j, p := range pathsIn(w) {
			t := target{path: p, unk: c.unk[i]}
			if j > 0 && c.unk[i].unknown() {
				t.unk = span{0, len(p)}
			}
			t.write = writes[name] || editors[name] || redirectLike(name, w)
			if name == "cp" || name == "install" || name == "rsync" {
				t.write = i == len(c.words)-1
			}
			if name == "dd" {
				t.write = strings.HasPrefix(w, "of=")
			}
			if name == "sed" || name == "perl" {
				t.write = inPlace
			}
			t.del = deletes[name] || (name == "find" && contains(c.words, "-delete")) || (name == "git" && len(c.words) > 1 && c.words[1] == "rm")
			out = append(out, t)
		}
	}
	out = append(out, intoDirectory(c)...)
	return append(out, special(c)...)
}

// redirectLike reports words that write a file by an option: tee -a is
// covered by tee; these are --output=FILE, -o FILE in tools that save.
func redirectLike(name, w string) bool {
	return (name == "curl" || name == "wget" || name == "sort" || name == "gcc" || name == "go") && (strings.HasPrefix(w, "--output=") || strings.HasPrefix(w, "-o"))
}

// intoDirectory lists, for cp, mv, ln, install and rsync whose last
// argument is a directory, each source's name inside it: cp -r x
// ~/.evokore/ writes ~/.evokore/x.
func intoDirectory(c shellCommand) []target {
	switch c.name() {
	case "cp", "mv", "ln", "install", "rsync":
	default:
		return nil
	}
	var ops []int
	for i := 1; i < len(c.words); i++ {
		if !strings.HasPrefix(c.words[i], "-") {
			ops = append(ops, i)
		}
	}
	if len(ops) < 2 {
		return nil
	}
	last := ops[len(ops)-1]
	dir := c.words[last]
	var out []target
	for _, i := range ops[:len(ops)-1] {
		base := strings.TrimRight(c.words[i], "/")
		if j := strings.LastIndexByte(base, '/'); j >= 0 {
			base = base[j+1:]
		}
		if base == "" || c.unk[i].unknown() || c.unk[last].unknown() {
			continue
		}
		out = append(out, target{path: strings.TrimRight(dir, "/") + "/" + base, write: true})
	}
	return out
}

// special lists what tar, unzip, git, sqlite3 and editors write besides
// their plain arguments.
func special(c shellCommand) []target {
	switch c.name() {
	case "tar", "bsdtar", "gtar":
		if d, u, ok := optionArg(c, "-C", "--directory"); ok && tarExtracts(c.words) {
			return []target{{path: d, unk: u, write: true, dir: true}}
		}
		if tarExtracts(c.words) {
			return []target{{path: ".", write: true, dir: true}}
		}
	case "unzip", "7z", "7za", "bsdcpio", "cpio":
		if d, u, ok := optionArg(c, "-d", ""); ok {
			return []target{{path: d, unk: u, write: true, dir: true}}
		}
		if d, u, ok := optionArg(c, "-o", ""); ok && strings.HasPrefix(c.name(), "7z") {
			return []target{{path: d, unk: u, write: true, dir: true}}
		}
		return []target{{path: ".", write: true, dir: true}}
	case "git":
		return gitTargets(c)
	case "patch":
		if d, u, ok := optionArg(c, "-d", "--directory"); ok {
			return []target{{path: d, unk: u, write: true, dir: true}}
		}
		return []target{{path: ".", write: true, dir: true}}
	case "sqlite3":
		return sqliteTargets(c)
	}
	if editors[c.name()] {
		return editorTargets(c)
	}
	return nil
}

func tarExtracts(words []string) bool {
	for _, w := range words[1:] {
		if w == "--extract" || w == "--get" || (!strings.HasPrefix(w, "--") && strings.Contains(w, "x") && (strings.HasPrefix(w, "-") || w == words[1])) {
			return true
		}
	}
	return false
}

// optionArg finds an option's value: "-d DIR", "-dDIR", "--dir=DIR" or
// "--dir DIR".
func optionArg(c shellCommand, short, long string) (string, span, bool) {
	for i := 1; i < len(c.words); i++ {
		w := c.words[i]
		switch {
		case (w == short || (long != "" && w == long)) && i+1 < len(c.words):
			return c.words[i+1], c.unk[i+1], true
		case long != "" && strings.HasPrefix(w, long+"="):
			v := strings.TrimPrefix(w, long+"=")
			return v, shift(c.unk[i], len(long)+1), true
		case len(short) == 2 && strings.HasPrefix(w, short) && len(w) > 2 && !strings.HasPrefix(w, "--"):
			return w[2:], shift(c.unk[i], 2), true
		}
	}
	return "", known, false
}

func shift(s span, n int) span {
	if !s.unknown() {
		return s
	}
	return span{max(0, s.from-n), max(0, s.to-n)}
}

// gitWrites are the git commands that write the work tree.
var gitWrites = map[string]bool{"apply": true, "am": true, "checkout": true, "restore": true, "reset": true, "merge": true, "pull": true,
	"stash": true, "cherry-pick": true, "revert": true, "switch": true, "rebase": true, "clone": true, "mv": true, "rm": true,
	"worktree": true, "read-tree": true, "checkout-index": true, "init": true}

// gitTargets: git -C DIR or --work-tree=DIR with a command that writes
// the work tree writes into DIR.
func gitTargets(c shellCommand) []target {
	dir, unk := ".", known
	for i := 1; i < len(c.words); i++ {
		w := c.words[i]
		switch {
		case (w == "-C" || w == "--work-tree" || w == "--git-dir") && i+1 < len(c.words):
			dir, unk = c.words[i+1], c.unk[i+1]
			i++
		case strings.HasPrefix(w, "--work-tree=") || strings.HasPrefix(w, "--git-dir="):
			dir, unk = w[strings.IndexByte(w, '=')+1:], shift(c.unk[i], strings.IndexByte(w, '=')+1)
		case strings.HasPrefix(w, "-"):
		default:
			if gitWrites[w] {
				return []target{{path: dir, unk: unk, write: true, dir: true}}
			}
			return nil
		}
	}
	return nil
}

// sqliteWrites are the sqlite3 dot-commands and SQL that write a file.
var sqliteWrites = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?im)(?:^\s*\.(?:output|once|save|backup(?:\s+\S+)?|log)\s+|attach\s+(?:database\s+)?|vacuum\s+(?:\S+\s+)?into\s+)(?:'([^']*)'|"([^"]*)"|(\S+))`)
})

// sqliteTargets: the database file, and every file a dot-command or SQL
// statement in the arguments or the stdin the line shows writes.
func sqliteTargets(c shellCommand) []target {
	var out []target
	text := strings.Join(c.words[1:], "\n")
	if c.hasStdin {
		text += "\n" + c.stdin
	}
	for _, m := range sqliteWrites().FindAllStringSubmatch(text, -1) {
		p := m[1] + m[2] + m[3]
		if p == "" || p == "-" || p == "stdout" || p == "off" || p == ":memory:" {
			continue
		}
		out = append(out, target{path: p, write: true})
	}
	if i := firstOperand(c, "cmd separator nullvalue newline"); i > 0 && !strings.HasPrefix(c.words[i], ".") {
		out = append(out, target{path: c.words[i], unk: c.unk[i], write: true})
	}
	return out
}

// editorTargets: every path an editor is told to open by a command
// (vim -c 'e FILE', +'w FILE') is written too.
func editorTargets(c shellCommand) []target {
	var out []target
	for i := 1; i < len(c.words); i++ {
		w := c.words[i]
		if w == "-c" || w == "--cmd" || strings.HasPrefix(w, "+") {
			cmd := strings.TrimPrefix(w, "+")
			if !strings.HasPrefix(w, "+") && i+1 < len(c.words) {
				cmd = c.words[i+1]
			}
			for _, f := range strings.Fields(cmd) {
				if strings.ContainsAny(f, "/~.") {
					out = append(out, target{path: f, write: true})
				}
			}
		}
	}
	return out
}

func hasInPlace(words []string) bool {
	for _, w := range words[1:] {
		if w == "-i" || strings.HasPrefix(w, "-i") || w == "--in-place" || strings.HasPrefix(w, "--in-place=") || (strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") && strings.Contains(w, "i")) {
			return true
		}
	}
	return false
}

func contains(ws []string, s string) bool {
	for _, w := range ws {
		if w == s {
			return true
		}
	}
	return false
}

// pathsIn returns the paths a word may name: the word itself, and the
// value of an option=value or if=/of= word.
func pathsIn(w string) []string {
	if w == "" {
		return nil
	}
	out := []string{w}
	if i := strings.IndexByte(w, '='); i > 0 && i < len(w)-1 {
		out = append(out, w[i+1:])
	}
	return out
}

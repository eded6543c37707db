package connect

import (
	"fmt"
	"regexp"
	"strings"
)

// syntax is how a client writes a reference to a variable inside a
// server's values. evokore reads ${NAME} only (config.Server.Resolve),
// with no default; an import rewrites each client's references to that,
// or refuses the server, because a reference passed on as literal text
// would reach the child as its key or its URL.
type syntax int

const (
	// literalVars: Claude Desktop and Codex expand nothing; a ${NAME}
	// written there is read as evokore's.
	literalVars syntax = iota
	// claudeVars: Claude Code's ${NAME} and ${NAME:-default}.
	claudeVars
	// editorVars: Cursor, VS Code and Windsurf: ${env:NAME}, ${userHome},
	// the workspace's ${workspaceFolder}, VS Code's ${input:id} and
	// Windsurf's ${file:path}.
	editorVars
	// geminiVars: Gemini CLI's $NAME and ${NAME}.
	geminiVars
)

var (
	bracedRef = regexp.MustCompile(`\$\{([^}]*)\}`)
	bareRef   = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)
	// varName is what evokore's ${...} holds (config's \w+).
	varName = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
)

// translate rewrites the variable references of one value, written in
// syntax v, as evokore's ${NAME}. A reference evokore cannot resolve is
// an error saying why and what to do instead.
func (v syntax) translate(s string) (string, error) {
	var problem error
	out := bracedRef.ReplaceAllStringFunc(s, func(m string) string {
		r, err := v.braced(m[2 : len(m)-1])
		if err != nil && problem == nil {
			problem = err
		}
		return r
	})
	if problem != nil {
		return "", problem
	}
	if v == geminiVars {
		out = bareRef.ReplaceAllStringFunc(out, func(m string) string { return "${" + m[1:] + "}" })
	}
	return out, nil
}

// braced is evokore's reference for the client's ${inner}.
func (v syntax) braced(inner string) (string, error) {
	if v == editorVars {
		return editorRef(inner)
	}
	if varName.MatchString(inner) {
		return "${" + inner + "}", nil
	}
	if name, _, ok := strings.Cut(inner, ":-"); ok && v == claudeVars && varName.MatchString(name) {
		return "", fmt.Errorf("'${%s:-…}' gives a default, and evokore's ${%s} takes none: set %s where evokore runs and write ${%s}, or write the value, then import again", name, name, name, name)
	}
	return "", unknownRef(inner)
}

// editorRef reads the references Cursor, VS Code and Windsurf share.
// Their own names come first: ${userHome} is theirs, not a variable.
func editorRef(inner string) (string, error) {
	kind, arg, _ := strings.Cut(inner, ":")
	switch {
	case varName.MatchString(inner) && !strings.HasPrefix(inner, "workspace") && inner != "userHome" && inner != "pathSeparator":
		return "${" + inner + "}", nil
	case kind == "env" && varName.MatchString(arg):
		return "${" + arg + "}", nil
	case inner == "userHome":
		return "${HOME}", nil
	case kind == "input":
		return "", fmt.Errorf("'${input:%s}' asks the user in the editor (its \"inputs\"), and evokore cannot ask: put the value in an environment variable, write ${NAME} instead, then import again", arg)
	case kind == "file":
		return "", fmt.Errorf("'${file:…}' reads a file when the editor starts the server, and evokore does not: put the value in an environment variable, write ${NAME} instead, then import again")
	case strings.HasPrefix(kind, "workspace") || inner == "pathSeparator" || inner == "/":
		return "", fmt.Errorf("'${%s}' is the editor's workspace, which evokore does not know: write the path instead, then import again", inner)
	}
	return "", unknownRef(inner)
}

// unknownRef refuses a reference evokore has no meaning for. Only its
// part before a ':' is shown: what follows may be a secret default.
func unknownRef(inner string) error {
	shown := inner
	if k, _, ok := strings.Cut(inner, ":"); ok {
		shown = k + ":…"
	}
	return fmt.Errorf("'${%s}' is not a variable evokore resolves (it reads ${NAME} only): write ${NAME} or the value instead, then import again", shown)
}

// placeholderNames are the variables evokore's ${NAME} placeholders in
// s refer to, appended to names.
func placeholderNames(s string, names map[string]bool) {
	for _, m := range bracedRef.FindAllStringSubmatch(s, -1) {
		if varName.MatchString(m[1]) {
			names[m[1]] = true
		}
	}
}

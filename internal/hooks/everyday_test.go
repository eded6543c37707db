package hooks

import "testing"

// TestEverydayBashIsAllowed: the constructs agents write every day parse
// and pass; a parser that asks for valid Bash would train users to say
// yes.
func TestEverydayBashIsAllowed(t *testing.T) {
	rules, _ := LoadRules(t.TempDir())
	for _, c := range []string{
		"diff <(sort a) <(sort b)", "case $x in a) echo a;;& b) echo b;; esac", "a=(1 2 3); echo ${a[@]} ${#a[@]}",
		"declare -A m=([k]=v); echo ${m[k]}", "function f { echo hi; }; f", "time ls", "! grep -q x f", "echo {1..5}",
		"let x++; ((i++)); echo $((i+1))", "echo $'\\t' $\"hi\"", "cat <<EOF\nhello $USER\nEOF", "exec 3>&1; ls >&3",
		"read -r -d '' x <<'EOF' || true\nbody\nEOF", "for ((i=0;i<3;i++)); do echo $i; done", "if [[ $x =~ ^a(b)$ ]]; then :; fi",
		"go test ./... 2>&1 | tail -20", "git log --format='%H %s' | head", "find . -name '*.go' -print0 | xargs -0 gofmt -l",
		"python3 - <<'EOF'\nimport json\nprint(json.dumps({'a': 1}))\nEOF", "select x in a b; do break; done", "coproc cat; echo hi",
		"echo \"${HOME}/x\" && ls ~/.config", "trap 'rm -f /tmp/x' EXIT", "sed -n '1,5p' file | awk '{print $1}'",
		"printf '%s\\n' a b | while read -r l; do echo \"$l\"; done", "x=$(git rev-parse HEAD); echo $x", "echo hi > /dev/null 2>&1",
	} {
		if d := judge(rules, "Bash", map[string]any{"command": c}, "/home/dev", "/home/dev/project", "/home/dev/.evokore"); d.Action != Allow {
			t.Errorf("%q: %s %s", c, d.Action, d.Reason)
		}
	}
}

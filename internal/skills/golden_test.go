package skills

import (
	"testing"

	starter "github.com/evokore/evokore/SKILLS"
)

// golden are queries a developer would type, over the starter library,
// with the skill that must come first (top 1) or among the first three.
// They mix exact names, aliases, typos, abbreviations and plain-language
// objectives that name no skill.
var golden = []struct {
	query string
	want  string
	top   int
}{
	{"docs", "docs-architect", 1},
	{"pr review", "pr-review", 1},
	{"review a pull request", "pr-review", 1},
	{"release readiness", "release-readiness", 1},
	{"relese readiness", "release-readiness", 1},
	{"is it safe to ship this release", "release-readiness", 3},
	{"go/no-go checklist before tagging", "release-readiness", 3},
	{"write release notes", "changelog-writing", 1},
	{"which version number should the next release get", "semver-versioning", 3},
	{"how do I undo a bad deploy", "rollback-plan", 3},
	{"tag and publish a release", "release-tagging", 3},
	{"find the commit that introduced a regression", "git-bisect", 1},
	{"test fails intermittently on CI", "flaky-test-triage", 1},
	{"the program panics with a nil pointer dereference", "crash-analysis", 3},
	{"why is this endpoint slow", "performance-profiling", 3},
	{"cpu profile flame graph", "performance-profiling", 1},
	{"debug a bug methodically", "systematic-debugging", 3},
	{"the build is broken and I don't know why", "systematic-debugging", 3},
	{"large refactor across many packages", "orch-refactor", 3},
	{"refactor without changing behaviour", "safe-refactoring", 3},
	{"import cycle between packages", "dependency-untangling", 1},
	{"delete unused code", "dead-code-removal", 1},
	{"rename a function everywhere", "rename-at-scale", 3},
	{"write a README", "docs-architect", 3},
	{"document the REST API", "api-docs", 3},
	{"record an architecture decision", "adr-writing", 1},
	{"on-call runbook for an alert", "runbook-writing", 1},
	{"what should I test", "testing-strategy", 3},
	{"table driven tests in go", "table-driven-tests", 1},
	{"test against a real database instead of mocks", "integration-testing", 3},
	{"improve test coverage", "coverage-gaps", 3},
	{"fuzz a parser", "fuzz-testing", 1},
	{"golang review", "go-code-review", 3},
	{"self review before opening a PR", "self-review", 3},
	{"how to write good code review comments", "review-comments", 3},
	{"permissions and approvals for MCP tools", "tool-governance", 1},
	{"mcp server won't start", "mcp-server-debugging", 3},
	{"add a server to mcp.config.json", "mcp-config-authoring", 3},
	{"too many tools in the context", "tool-discovery-tuning", 3},
	{"build my own MCP server", "mcp-server-authoring", 3},
	{"security review of a change", "security-review", 1},
	{"leaked api key in git history", "secret-scanning", 1},
	{"check dependencies for CVEs", "dependency-audit", 3},
	{"server-side request forgery", "ssrf-prevention", 1},
	{"prompt injection", "prompt-injection-defense", 1},
	{"production is down", "incident-triage", 3},
	{"write a postmortem", "postmortem", 1},
	{"status page update during an outage", "incident-communication", 3},
	{"search the logs for errors", "log-investigation", 3},
	{"k8s logs", "log-investigation", 3},
	{"break a big task into steps for agents", "orch-plan", 3},
	{"orch plan", "orch-plan", 1},
	{"review a huge PR with several agents", "orch-review", 3},
	{"understand an unfamiliar codebase", "repo-ingestor", 3},
	{"repo ingestor", "repo-ingestor", 1},
	{"tool governance", "tool-governance", 1},
	{"hand over work to another session", "task-handoff", 3},
	{"context window is full", "context-budgeting", 3},
}

// TestGoldenQueries runs the golden set over the starter library. Every
// query must find its skill within its rank; the log reports the rank
// each one reached, for tuning.
func TestGoldenQueries(t *testing.T) {
	ix := Build(Source{FS: starter.FS, Label: EmbeddedLabel})
	top1, top3 := 0, 0
	for _, g := range golden {
		if ix.ByName(g.want) == nil {
			t.Errorf("golden skill %q is not in the starter library", g.want)
			continue
		}
		ms := ix.Search(g.query, 10)
		rank := 0
		for i, m := range ms {
			if m.Skill.Name == g.want {
				rank = i + 1
				break
			}
		}
		if rank == 1 {
			top1++
		}
		if rank >= 1 && rank <= 3 {
			top3++
		}
		if rank == 0 || rank > g.top {
			var got []string
			for _, m := range ms[:min(3, len(ms))] {
				got = append(got, m.Skill.Name)
			}
			t.Errorf("%q: %s at rank %d, want top %d; got %v", g.query, g.want, rank, g.top, got)
		}
	}
	t.Logf("golden set: %d queries, %d top-1, %d top-3", len(golden), top1, top3)
}

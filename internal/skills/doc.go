// Package skills owns the skill library: indexing markdown skills into
// immutable snapshots, searching them, checking their dependencies, the
// skill graph, the watcher that re-indexes on change, and the routing
// telemetry of resolve_workflow.
//
// A library is read from a directory (--skills, EVOKORE_SKILLS_DIR,
// default ./SKILLS) or, when that directory does not exist, from the
// starter library compiled into the binary. Layout rules follow
// EVOKORE-MCP: every top-level directory is a category; below it each
// SKILL.md, and each other *.md that opens with frontmatter, is a skill.
// Frontmatter is validated by internal/config; a malformed file is
// reported with its file and line and skipped.
//
// It serves the native tools (internal/native/skilltools) and the
// resources and prompts (internal/resources); it knows nothing of MCP.
//
//	lib := skills.Open("SKILLS", os.Stderr)
//	for _, m := range lib.Index().Search("review a pull request", 3) {
//		fmt.Println(m.Skill.Name, m.Reasons)
//	}
package skills

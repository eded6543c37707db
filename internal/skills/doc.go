// Package skills owns the skill library: indexing markdown skills into
// immutable snapshots, searching them, checking their dependencies, the
// skill graph, the watcher that re-indexes on change, and the routing
// telemetry of resolve_workflow. It serves the native tools
// (internal/native/skilltools) and the resources and prompts
// (internal/resources); it knows nothing of MCP.
//
//	lib := skills.Open("SKILLS", logging.New(os.Stderr, slog.LevelInfo))
//	for _, m := range lib.Index().Search("review a pull request", 3) {
//		fmt.Println(m.Skill.Name, m.Reasons)
//	}
//
// # Where skills come from
//
// The root is --skills, else EVOKORE_SKILLS_DIR, else ./SKILLS. While that
// directory does not exist, the starter library compiled into the binary
// (module directory SKILLS, package starter) is served instead; it is
// read-only, so fetch_skill and skill_creator ask for the directory to be
// created rather than silently replacing forty starter skills with one new
// skill. A refresh re-checks the directory, so creating it switches over.
//
// Layout rules are EVOKORE-MCP's: every top-level directory is a category
// (top-level files are ignored); in every directory below it, each *.md
// other than SKILL.md is a candidate named after the file, and each
// subdirectory's SKILL.md a candidate named after the directory; the walk
// goes five levels below the category (a SKILL.md one level deeper still
// counts); node_modules, .git, __pycache__, __tests__, .claude, themes,
// assets and scripts are skipped, and symbolic links are never followed.
// A candidate is a skill when it opens with "---" frontmatter. The
// subcategory is the directories between the category and the skill.
//
// Frontmatter is validated by #SkillFrontmatter (internal/config). A
// malformed file is reported with its file:line and skipped; it never
// stops indexing. Keys are "category/name" in lower case; when two files
// claim one key, the shallower wins, then the first in path order, and
// the loser is reported. Resource URIs are skill://category[/sub]/name
// with unsafe characters replaced; a URI two skills would share gets a
// numbered suffix, so every skill stays readable.
//
// An Index never changes once built; Library swaps whole snapshots
// atomically, so readers never lock.
//
// # Ranking
//
// Search concatenates three tiers, each skill once:
//
//  1. Alias exact: the normalised query (lower case, separators folded to
//     spaces, so "Release_Readiness" = "release readiness") equals the
//     skill's name, file/directory name or an alias from its
//     frontmatter. Path segments are deliberately not tier-1 aliases: in
//     EVOKORE-MCP the query "orchestration" returned a whole category in
//     alphabetical order; here it ranks the category's skills by
//     relevance instead.
//  2. Name prefix: the normalised name starts with the query; shallow,
//     then short names first.
//  3. Relevance: the shared engine, internal/search (Snowball stems,
//     BM25F, derived-form prefixes, length-aware typos, jargon from
//     evokore.cue and WordNet synonyms, abstention), over eight fields
//     weighted name 6 > description 3.5 > aliases 3 > tags 2.5 > hints 2
//     > category/path 1.2 > summaries and metadata 1 > body 0.5, the body
//     weak (a skill matched only there weighs little, and not at all when
//     it matches only part of the query).
//
// A relevance score is multiplied by the square of the query's coverage
// (the idf-weighted share of its words a skill matches). Phrase bonuses
// reward a name that contains the query or a query that contains the
// name. The rerank multiplies each score by a factor fixed at indexing: a
// little less per level of depth, more for root skills, less for
// reference leaves (references/, examples/, templates/ ...), a little
// more for skills with steps or code to run; expert-panel documents
// (panel-*) rank lower too. Neither penalty applies when the query asks
// for that material ("reference", "template", "panel" ...). When no skill
// covers enough of the query the search abstains, and Find says why.
// Ties break on depth, name and key, so results are deterministic.
//
// Every match carries up to three reasons ("name: pr-review", "tag: ci",
// "alias exact: docs", "description: flaky (typo: flakey → flaky)").
//
// EVOKORE-MCP also reranked resolve_workflow by a success rate read from
// its routing telemetry, but nothing ever recorded a success, so that
// stage never ran; it is not reproduced. The telemetry lines themselves
// are written (RecordRouting).
//
// # Dependencies
//
// requires entries are "name", "name@<semver constraint>" (parsed, unlike
// EVOKORE-MCP) or {name, minVersion}; conflicts are names. They resolve
// by exact key or name, never by similarity, so a missing dependency is
// reported missing. Constraints use Masterminds/semver: "^1.2", "~2.3",
// ">=1.0.0, <2.0.0"; note that ranges skip prerelease versions unless the
// constraint names one (">=1.0.0-0").
//
// # The skill graph
//
// Next steps after a skill come from the library itself, so they are
// never stale and need no build step: first the skills its markdown links
// to (skill:// URIs or relative links to their files), then the skills
// that require it. execute_skill returns them.
package skills

package skills

import (
	"cmp"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/safefile"
)

// Layout limits, as EVOKORE-MCP applies them.
const (
	// maxDepth is how deep below a category directories are walked.
	maxDepth = 5
	// SkillFile is the file that makes a directory a skill.
	SkillFile = "SKILL.md"
)

// skipDirs are never walked: tooling, caches and skill assets.
var skipDirs = map[string]bool{
	"node_modules": true, ".git": true, "__pycache__": true, "__tests__": true,
	".claude": true, "themes": true, "assets": true, "scripts": true,
}

// Source is where a library is read from.
type Source struct {
	FS fs.FS
	// Dir is the directory FS reads, "" for the embedded starter library.
	Dir string
	// Label is how messages name the root ("SKILLS", "built-in:SKILLS").
	Label string
}

func (s Source) display(rel string) string {
	if s.Label == "" {
		return rel
	}
	return s.Label + "/" + rel
}

// Index is one immutable snapshot of a library. It is built whole and
// replaced whole; readers never lock.
type Index struct {
	Source Source
	// Skills are ordered by key.
	Skills []*Skill
	// Diagnostics are the problems found while indexing: malformed files
	// (skipped), key collisions (the loser skipped), bad versions and
	// constraints. Dependency problems are not here: see Problems.
	Diagnostics config.Diagnostics
	// Built is when indexing finished; Took is how long it took.
	Built time.Time
	Took  time.Duration

	byKey   map[string]*Skill
	byName  map[string][]*Skill
	byURI   map[string]*Skill
	byLower map[string]*Skill
	byPath  map[string]*Skill
	exact   map[string][]*Skill // normalised name, alias or fallback name
	// lex is the relevance index, built by the first search: it is most
	// of an index's build time and of the heap it holds, and a session
	// that never searches skills (resources and lookups by name do not)
	// never pays for it.
	lex func() *lexicon
	// served is the index as the Skills Extension serves it, built on
	// first use: it reads every file of every skill.
	served func() *Served
}

// Build indexes a library. It never fails: unreadable and malformed files
// are reported in Diagnostics and skipped.
func Build(src Source) *Index {
	start := time.Now()
	ix := &Index{Source: src}
	cands, ds := walk(src)
	ix.Diagnostics = append(ix.Diagnostics, ds...)

	type parsed struct {
		skill *Skill
		ds    config.Diagnostics
	}
	results := make([]parsed, len(cands))
	var wg sync.WaitGroup
	work := make(chan int)
	// One core is left to the sessions: the index is built in the
	// background right after the handshake, and a worker per core kept
	// the client's first requests waiting for a scheduler tick (~10 ms).
	workers := max(runtime.GOMAXPROCS(0)-1, 1)
	for range min(workers, max(len(cands), 1)) {
		wg.Go(func() {
			for i := range work {
				c := cands[i]
				display := src.display(c.rel)
				b, err := safefile.LoadFS(src.FS, c.rel, display, safefile.MaxConfigBytes)
				if err != nil {
					d := config.ReadProblem(display, err)
					d.Code = CodeRead
					results[i].ds = config.Diagnostics{d}
					continue
				}
				s, ds, _ := parseSkill(c, b, display)
				results[i] = parsed{s, ds}
			}
		})
	}
	for i := range cands {
		work <- i
	}
	close(work)
	wg.Wait()

	var all []*Skill
	for _, r := range results {
		ix.Diagnostics = append(ix.Diagnostics, r.ds...)
		if r.skill != nil {
			all = append(all, r.skill)
		}
	}
	ix.assemble(all)
	ix.Diagnostics.Sort()
	ix.Built = time.Now()
	ix.Took = ix.Built.Sub(start)
	return ix
}

// walk applies the layout rules: each top-level directory is a category;
// in every directory below it, each *.md other than SKILL.md is a
// candidate named after the file, and each subdirectory's SKILL.md one
// named after the directory. Symlinks and the skip list are never
// followed.
func walk(src Source) ([]candidate, config.Diagnostics) {
	var out []candidate
	var ds config.Diagnostics
	top, err := fs.ReadDir(src.FS, ".")
	if err != nil {
		return nil, config.Diagnostics{{Position: config.Position{File: src.Label}, Severity: config.SeverityError,
			Code: CodeRead, Message: err.Error()}}
	}
	// parents are the directories below the category down to dir, dir
	// included; depth is len(parents).
	var visit func(dir, category string, parents []string)
	visit = func(dir, category string, parents []string) {
		entries, err := fs.ReadDir(src.FS, dir)
		if err != nil {
			ds = append(ds, config.Diagnostic{Position: config.Position{File: src.display(dir)}, Severity: config.SeverityError,
				Code: CodeRead, Message: err.Error()})
			return
		}
		depth := len(parents)
		if depth > 0 {
			for _, e := range entries {
				if e.Name() == SkillFile && e.Type().IsRegular() {
					out = append(out, candidate{rel: path.Join(dir, SkillFile), category: category,
						sub: strings.Join(parents[:depth-1], "/"), fallback: parents[depth-1]})
				}
			}
		}
		if depth > maxDepth {
			return // deeper than the walk goes: only its SKILL.md counts
		}
		sub := strings.Join(parents, "/")
		for _, e := range entries {
			name := e.Name()
			if !e.Type().IsRegular() || !strings.HasSuffix(name, ".md") || name == SkillFile {
				continue
			}
			out = append(out, candidate{rel: path.Join(dir, name), category: category, sub: sub, fallback: strings.TrimSuffix(name, ".md")})
		}
		for _, e := range entries {
			if e.IsDir() && e.Type()&fs.ModeSymlink == 0 && !skipDirs[e.Name()] {
				visit(path.Join(dir, e.Name()), category, append(slices.Clone(parents), e.Name()))
			}
		}
	}
	for _, e := range top {
		if e.Type()&fs.ModeSymlink != 0 || !e.IsDir() || skipDirs[e.Name()] || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		visit(e.Name(), e.Name(), nil)
	}
	return out, ds
}

// assemble resolves key collisions, builds the lookups, the skill graph
// and the search index.
func (ix *Index) assemble(all []*Skill) {
	// A key defined twice keeps the shallowest definition, then the first
	// in path order, whatever order the files were read in.
	slices.SortFunc(all, func(a, b *Skill) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Depth, b.Depth), cmp.Compare(a.Path, b.Path))
	})
	ix.byKey = map[string]*Skill{}
	for _, s := range all {
		if w, taken := ix.byKey[s.Key]; taken {
			ix.Diagnostics = append(ix.Diagnostics, config.Diagnostic{
				Position: config.Position{File: s.File, Line: 1}, Severity: config.SeverityWarning, Code: CodeCollision,
				Message: fmt.Sprintf("skill key %q is also defined by %s, which wins (shallower, or first in path order); this file is ignored", s.Key, w.File),
			})
			continue
		}
		ix.byKey[s.Key] = s
		ix.Skills = append(ix.Skills, s)
	}
	ix.byName = map[string][]*Skill{}
	ix.byURI = map[string]*Skill{}
	ix.byLower = map[string]*Skill{}
	ix.byPath = map[string]*Skill{}
	ix.exact = map[string][]*Skill{}
	for _, s := range ix.Skills {
		ln := strings.ToLower(s.Name)
		ix.byName[ln] = append(ix.byName[ln], s)
		ix.byPath[s.Path] = s
		s.boost = rerankFactor(s)
		if w, taken := ix.byURI[s.URI]; taken {
			uri := s.URI
			for n := 2; ix.byURI[s.URI] != nil; n++ {
				s.URI = fmt.Sprintf("%s-%d", uri, n)
			}
			ix.Diagnostics = append(ix.Diagnostics, config.Diagnostic{
				Position: config.Position{File: s.File, Line: 1}, Severity: config.SeverityWarning, Code: CodeURI,
				Message: fmt.Sprintf("resource URI %s is taken by %s; this skill is served as %s", uri, w.File, s.URI),
			})
		}
		ix.byURI[s.URI] = s
		if _, taken := ix.byLower[strings.ToLower(s.URI)]; !taken {
			ix.byLower[strings.ToLower(s.URI)] = s
		}
		seen := map[string]bool{}
		for _, a := range append([]string{s.Name, s.fallback}, s.Aliases...) {
			if n := normalize(a); n != "" && !seen[n] {
				seen[n] = true
				ix.exact[n] = append(ix.exact[n], s)
			}
		}
	}
	for _, list := range ix.byName {
		sortByDepth(list)
	}
	for _, list := range ix.exact {
		sortByDepth(list)
	}
	ix.linkGraph()
	skills := ix.Skills
	ix.lex = sync.OnceValue(func() *lexicon { return buildLexicon(skills) })
	src := ix.Source
	ix.served = sync.OnceValue(func() *Served { return serve(src, skills) })
}

func sortByDepth(list []*Skill) {
	slices.SortFunc(list, func(a, b *Skill) int {
		return cmp.Or(cmp.Compare(a.Depth, b.Depth), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Key, b.Key))
	})
}

// Len is the number of skills.
func (ix *Index) Len() int { return len(ix.Skills) }

// ByKey returns the skill with the "category/name" key (any case).
func (ix *Index) ByKey(key string) *Skill { return ix.byKey[strings.ToLower(strings.TrimSpace(key))] }

// ByName returns the skill with exactly this name (any case); when
// several categories have one, the shallowest, then the first by key.
func (ix *Index) ByName(name string) *Skill {
	if list := ix.byName[strings.ToLower(strings.TrimSpace(name))]; len(list) > 0 {
		return list[0]
	}
	return nil
}

// Resolve finds a skill by exact reference: a "category/name" key, else a
// name. It never guesses: dependency checks rely on that.
func (ix *Index) Resolve(ref string) *Skill {
	if s := ix.ByKey(ref); s != nil {
		return s
	}
	return ix.ByName(ref)
}

// ByURI returns the skill a skill:// URI names. Case and the characters
// URIs replace are forgiven, so "skill://My Tools/x" finds
// "skill://My-Tools/x".
func (ix *Index) ByURI(uri string) *Skill {
	if s := ix.byURI[uri]; s != nil {
		return s
	}
	if s := ix.byLower[strings.ToLower(uri)]; s != nil {
		return s
	}
	rest, ok := strings.CutPrefix(uri, URIScheme)
	if !ok {
		return nil
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	for i, p := range parts {
		parts[i] = uriPart(p, false)
	}
	return ix.byLower[strings.ToLower(URIScheme+strings.Join(parts, "/"))]
}

// Categories counts the skills of each category, sorted by name.
func (ix *Index) Categories() []CategoryCount {
	counts := map[string]int{}
	for _, s := range ix.Skills {
		counts[s.Category]++
	}
	out := make([]CategoryCount, 0, len(counts))
	for c, n := range counts {
		out = append(out, CategoryCount{Name: c, Count: n})
	}
	slices.SortFunc(out, func(a, b CategoryCount) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// CategoryCount is one category and how many skills it has.
type CategoryCount struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

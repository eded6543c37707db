package vet

import (
	"os"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/skills"
)

// CodeSkillsDir is the code of a skills directory that cannot be read.
const CodeSkillsDir = "skills-dir"

// Skills indexes the skill library in dir the way the router does and
// reports what it would skip or warn about: malformed frontmatter,
// unclosed frontmatter, key and URI collisions, versions that are not
// semver, invalid constraints, missing dependencies, unsatisfied version
// constraints, conflicts and requires cycles. Every problem is positioned
// at the skill file's own line. strict turns warnings into errors.
func Skills(dir string, strict bool) config.Diagnostics {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		msg := "not a directory"
		if err != nil {
			msg = err.Error()
		}
		return config.Diagnostics{{Position: config.Position{File: dir}, Severity: config.SeverityError, Code: CodeSkillsDir,
			Message: "cannot read the skills directory: " + msg}}
	}
	ix := skills.Build(skills.Source{FS: os.DirFS(dir), Dir: dir, Label: dir})
	ds := append(config.Diagnostics{}, ix.Diagnostics...)
	ds = append(ds, ix.AllProblems()...)
	if strict {
		for i := range ds {
			ds[i].Severity = config.SeverityError
		}
	}
	ds.Sort()
	return ds
}

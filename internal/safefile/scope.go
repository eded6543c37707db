package safefile

import (
	"path/filepath"
	"strings"
)

// Scope is where a tool may open files a model names: under one of Roots
// and under none of Excluded, judged on the real path (symlinks followed,
// in the path and in the roots alike), so a link inside a root that points
// out of it leads nowhere.
//
// The real path is checked, then opened: a model that can swap a
// directory of the path for a symlink between the two could still step
// out. That needs a second tool that writes symlinks where the first one
// reads, which reads the file itself anyway.
type Scope struct {
	Roots    []string
	Excluded []string
}

// Resolve returns path's real path when it lies within s. Any other path,
// existing or not, is ErrUnavailable: the answer must not tell which
// files exist outside.
func (s Scope) Resolve(path string) (string, error) {
	if path == "" || !filepath.IsAbs(path) {
		return "", ErrUnavailable
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", ErrUnavailable
	}
	for _, ex := range s.Excluded {
		if under(ex, real) {
			return "", ErrUnavailable
		}
	}
	for _, root := range s.Roots {
		if under(root, real) {
			return real, nil
		}
	}
	return "", ErrUnavailable
}

// under reports whether real (a resolved absolute path) lies inside dir,
// or is dir, once dir's own symlinks are followed. A dir that does not
// resolve holds nothing.
func under(dir, real string) bool {
	if dir == "" {
		return false
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(root, real)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

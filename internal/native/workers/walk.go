package workers

import (
	"context"
	"io/fs"
	"path/filepath"
)

// skipDirs are never walked: dependencies, build output and VCS data.
var skipDirs = map[string]bool{
	".git": true, "node_modules": true, "vendor": true, "dist": true, "build": true,
	"target": true, ".venv": true, "__pycache__": true, ".next": true, "coverage": true,
}

// maxFiles bounds a walk so a worker pointed at / still finishes.
const maxFiles = 200_000

// walkFiles calls fn for each regular file under root with its path
// relative to root, skipping skipDirs; it stops at maxFiles (truncated)
// or when ctx ends.
func walkFiles(ctx context.Context, root string, fn func(rel, abs string, d fs.DirEntry)) (truncated bool, err error) {
	n := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil // unreadable entries are skipped
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if p != root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if n >= maxFiles {
			truncated = true
			return filepath.SkipAll
		}
		n++
		rel, _ := filepath.Rel(root, p)
		fn(filepath.ToSlash(rel), p, d)
		return nil
	})
	return truncated, err
}

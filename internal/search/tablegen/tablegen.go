// Package tablegen is the driver the search engine's table generators
// (vectorgen, wordnetgen) share: find the module root and the source,
// build the table, and write it or, with -check, compare it with the
// committed one. A missing source is no error: the sources are frozen
// and large, so where they are not installed the committed table stands
// and the command says so.
package tablegen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// Table is one generated file and how to build it.
type Table struct {
	// Tool names the command in messages ("vectorgen").
	Tool string
	// Out is the generated file, relative to the module root.
	Out string
	// Source is where the source is; Default, relative to the module
	// root, when it is empty.
	Source, Default string
	// Probe is the file under Source whose presence says the source is
	// installed; "" when Source is that file.
	Probe string
	// Install says how to get the source, Regenerate how to rewrite Out.
	Install, Regenerate string
	// Build makes the table from the source.
	Build func(source string) ([]byte, error)
}

// Run builds the table and writes it to Out, or with check fails when
// Out differs. It exits the process on failure.
func (t Table) Run(check bool) {
	root, err := moduleRoot()
	if err != nil {
		t.fail(err)
	}
	src := t.Source
	if src == "" {
		src = filepath.Join(root, t.Default)
	}
	if _, err := os.Stat(filepath.Join(src, t.Probe)); err != nil {
		fmt.Fprintf(os.Stderr, "%s: no source at %s (%s); %s left as committed\n", t.Tool, src, t.Install, t.Out)
		return
	}
	table, err := t.Build(src)
	if err != nil {
		t.fail(err)
	}
	path := filepath.Join(root, t.Out)
	if check {
		old, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(old, table) {
			t.fail(fmt.Errorf("%s is stale: run `%s` and commit it", t.Out, t.Regenerate))
		}
		return
	}
	if err := os.WriteFile(path, table, 0o644); err != nil {
		t.fail(err)
	}
}

func (t Table) fail(err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", t.Tool, err)
	os.Exit(1)
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

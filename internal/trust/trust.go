// Package trust records which project directories the user trusts to
// change evokore's security settings, the way direnv does: `evokore trust
// DIR` stores the hash of each project file that may carry such settings
// (.env, permissions.yml, mcp.config.json), and a file is trusted only
// while its content still has that hash. An edit, by the user or by a
// hostile commit, lapses the trust until the user looks and trusts again.
//
// The record lives in the user's EVOKORE_HOME, which a project directory
// cannot name (EVOKORE_HOME is itself a security setting).
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/statefile"
)

// Files are the project files trust covers.
var Files = []string{".env", "permissions.yml", "mcp.config.json"}

const storeFile = "trusted.json"

// record maps an absolute directory to its files' hashes.
type record map[string]map[string]string

// load reads the trust records; an error names the file, since 'evokore
// trust' and doctor print it as it is.
func load(home string) (record, error) {
	r := record{}
	path := filepath.Join(home, storeFile)
	if _, err := statefile.ReadJSON(path, &r); err != nil {
		return nil, fmt.Errorf("trusted projects %s cannot be read: %w", path, err)
	}
	return r, nil
}

// Check reads home's trust records as Trusted does and returns why it
// cannot: while it cannot, no project directory is trusted.
func Check(home string) error {
	_, err := load(home)
	return err
}

func hashFile(path string) (string, error) {
	b, err := safefile.Load(path, safefile.MaxConfigBytes)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Trust records the current content of dir's project files and returns
// the names of those that exist.
func Trust(home, dir string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	r, err := load(home)
	if err != nil {
		return nil, err
	}
	hashes := map[string]string{}
	var names []string
	for _, f := range Files {
		h, err := hashFile(filepath.Join(abs, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		hashes[f] = h
		names = append(names, f)
	}
	r[abs] = hashes
	return names, statefile.WriteJSON(filepath.Join(home, storeFile), r, 0o600)
}

// Revoke forgets dir; it reports whether dir was trusted.
func Revoke(home, dir string) (bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, err
	}
	r, err := load(home)
	if err != nil {
		return false, err
	}
	if _, ok := r[abs]; !ok {
		return false, nil
	}
	delete(r, abs)
	return true, statefile.WriteJSON(filepath.Join(home, storeFile), r, 0o600)
}

// Trusted reports whether the file name in dir has the content the user
// trusted. A missing or unreadable record trusts nothing.
func Trusted(home, dir, name string) bool {
	if !slices.Contains(Files, name) {
		return false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	r, err := load(home)
	if err != nil {
		return false
	}
	want, ok := r[abs][name]
	if !ok {
		return false
	}
	got, err := hashFile(filepath.Join(abs, name))
	return err == nil && got == want
}

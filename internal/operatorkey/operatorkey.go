// Package operatorkey owns the operator key: the secret under
// EVOKORE_HOME (the file secrets/operator.key) that evokore's human
// surfaces ask of whoever decides an approval. The dashboard lets a browser decide once it
// signed in with the key (or a one-time code the dashboard printed), an API
// caller when it sends the key as the Evokore-Operator-Key header; a
// router's approvals feed records a verdict only on a connection that sent
// that header.
//
// Why a file: the boundary of an approval is the operating system. An
// agent's shell that runs as the same user can run every command the user
// can, so no command, route or token it can read may decide an approval.
// A client that confines its agent's shell (Claude Code's sandbox) denies
// it reading EVOKORE_HOME/secrets/, where the key lives (`evokore hooks
// install --sandbox` writes that rule), and that is what keeps the agent
// from deciding through the dashboard or the feed. Nothing else about the
// file is special: it is 64 hex characters, mode 0600, in a 0700
// directory, made by the first evokore that needs it.
//
// The package holds no state beyond the file: Load reads it again every
// time, so a key the operator replaced takes effect at once.
package operatorkey

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/evokore/evokore/internal/safefile"
)

// Dir is the folder under EVOKORE_HOME that holds the secrets the human
// surfaces check, the one a confined agent shell may not read.
const Dir = "secrets"

// File is the key's path under EVOKORE_HOME, as messages name it.
const File = Dir + "/operator.key"

// Header is the HTTP header that carries the key.
const Header = "Evokore-Operator-Key"

// keyLen is the key's length in hex characters (32 random bytes).
const keyLen = 64

// Path is the key file of home.
func Path(home string) string { return filepath.Join(home, Dir, "operator.key") }

// Key is a loaded operator key. The zero Key matches nothing.
type Key struct{ digest [sha256.Size]byte }

// IsZero reports a Key that matches nothing.
func (k Key) IsZero() bool { return k == Key{} }

// Match reports whether s is the key, in time that does not depend on
// where s and the key differ.
func (k Key) Match(s string) bool {
	if k.IsZero() {
		return false
	}
	d := sha256.Sum256([]byte(strings.TrimSpace(s)))
	return subtle.ConstantTimeCompare(d[:], k.digest[:]) == 1
}

// Load reads home's key, making it first when there is none. An error
// names the file and says what is wrong with it; whoever meets one
// refuses every decision (fail closed).
func Load(home string) (Key, error) {
	text, err := Read(home)
	if errors.Is(err, fs.ErrNotExist) {
		if err := create(home); err != nil && !errors.Is(err, fs.ErrExist) {
			return Key{}, fmt.Errorf("cannot make the operator key %s: %w", Path(home), err)
		}
		text, err = Read(home)
	}
	if err != nil {
		return Key{}, err
	}
	return Key{digest: sha256.Sum256([]byte(text))}, nil
}

// Read returns the key's text (for the operator's own tools; never for a
// log or an answer). A missing file is fs.ErrNotExist; a file others may
// read, or that is not a key, is an error naming it.
func Read(home string) (string, error) {
	path := Path(home)
	f, err := safefile.OpenOwn(path, 4096)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Info()
	if err != nil {
		return "", err
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s: other users may read it (mode %s); run chmod 600 on it", path, fi.Mode().Perm())
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return "", err
	}
	text := strings.TrimSpace(string(data))
	if len(text) != keyLen || !isHex(text) {
		return "", fmt.Errorf("%s: not an operator key (want %d hex characters); delete it and evokore makes a new one", path, keyLen)
	}
	return text, nil
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// create writes a new key, never over one another process made first:
// the key goes to a temporary file that is then linked to its name,
// which fails if the name exists, so no reader sees half a key.
func create(home string) error {
	dir := filepath.Join(home, Dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b := make([]byte, keyLen/2)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".operator.key.*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(hex.EncodeToString(b) + "\n"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Link(tmp.Name(), Path(home))
}

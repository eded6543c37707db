package connect

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/evokore/evokore/internal/statefile"
)

// record is what connect changed in one client file, kept under
// EVOKORE_HOME/connections so disconnect can put it back. It holds the
// imported entries as they were written, secrets included, so it is
// written 0600 like the client's own file.
type record struct {
	Client string `json:"client"`
	File   string `json:"file"`
	Config string `json:"config"`
	// Backup is the copy of the file taken before connect's first change;
	// Before is its hash ("" when the file did not exist), After the
	// file's hash after connect's last change, and Changes how many
	// changes connect made. With one change and the file still at After,
	// disconnect puts Backup back byte for byte.
	Backup  string `json:"backup"`
	Before  string `json:"before"`
	After   string `json:"after"`
	Changes int    `json:"changes"`
	// KeyAdded is set when connect added the servers section itself.
	KeyAdded bool `json:"keyAdded,omitempty"`
	// Previous is an entry named evokore that connect replaced.
	Previous *string    `json:"previous,omitempty"`
	Imported []imported `json:"imported,omitempty"`
	// Order is the client's servers in file order at the first import, so
	// disconnect puts each back where it was.
	Order []string `json:"order,omitempty"`
}

type imported struct {
	Name string `json:"name"`
	Raw  string `json:"raw"`
}

func recordPath(home, file string) string {
	sum := sha256.Sum256([]byte(file))
	return filepath.Join(home, "connections", hex.EncodeToString(sum[:8])+".json")
}

func loadRecord(home, file string) (*record, error) {
	var r record
	ok, err := statefile.ReadJSON(recordPath(home, file), &r)
	if err != nil {
		return nil, err
	}
	if !ok || r.File != file {
		return nil, nil
	}
	return &r, nil
}

func (r *record) save(home string) error {
	return statefile.WriteJSON(recordPath(home, r.File), r, 0o600)
}

func dropRecord(home, file string) error {
	err := os.Remove(recordPath(home, file))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func hash(b []byte) string {
	if b == nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

package connect

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/aymanbagabas/go-udiff"

	"github.com/evokore/evokore/internal/statefile"
)

// Options say what to connect.
type Options struct {
	Client Client
	// File is the client's file (absolute).
	File   string
	Target Target
	// Home is EVOKORE_HOME (absolute), where the records are kept.
	Home string
	// Import moves the client's other servers into Target.Config.
	Import bool
	// Schema checks one server entry (compact JSON) against evokore's
	// config schema, nil when it cannot be checked: an import writes
	// OAuth settings only where the schema takes them.
	Schema func(entry []byte) error
}

// File is one file a plan changes.
type File struct {
	Path          string
	Before, After []byte
	// Existed is whether the file was there; Remove asks for it to be
	// deleted (disconnect putting back a file connect created).
	Existed, Remove bool
}

// Changed reports whether the plan changes the file.
func (f File) Changed() bool {
	return f.Remove || !bytes.Equal(f.Before, f.After) || (!f.Existed && f.After != nil)
}

// Refusal is a server connect left in the client, and why.
type Refusal struct{ Name, Why string }

// Plan is what connect or disconnect would change. Nothing is written
// until Apply.
type Plan struct {
	Client, Config File
	// Imported are the servers moved into the config; Already those the
	// config already had the same; Refused those left in the client.
	// Kept are the servers left because --import was not given;
	// Restored those disconnect put back.
	Imported, Already, Kept, Restored []string
	Refused                           []Refusal
	// Connected reports that the evokore entry was already there as
	// wanted.
	Connected bool
	// Passed are the variables evokore's entry passes from the client's
	// environment (Codex's env_vars, Gemini's env): those the servers of
	// evokore's config refer to.
	Passed []string
	// ByteRestore is set when disconnect puts the backup back whole.
	ByteRestore bool
	// NoRecord is set when disconnect found no record of the connection.
	NoRecord bool

	home   string
	record *record
	// dropRecord: disconnect forgets the connection.
	dropRecord bool
}

// maxFile bounds a client file connect reads: ~/.claude.json grows with
// the client's history, but not to this.
const maxFile = 64 << 20

// readFile reads a client's or evokore's file: a regular file (a symlink
// to one is followed) under maxFile, or absent.
func readFile(path string) ([]byte, bool, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !info.Mode().IsRegular() {
		return nil, true, fmt.Errorf("%s is not a regular file; it is left as it is", path)
	}
	if info.Size() > maxFile {
		return nil, true, fmt.Errorf("%s is %d bytes, more than the %d connect reads; it is left as it is", path, info.Size(), maxFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// Disconnect plans the evokore entry out of the client's file and the
// servers connect imported back in. When the file is as connect left it,
// the backup taken before connect is put back byte for byte.
func Disconnect(o Options) (*Plan, error) {
	before, existed, err := readFile(o.File)
	if err != nil {
		return nil, err
	}
	rec, err := loadRecord(o.Home, o.File)
	if err != nil {
		return nil, fmt.Errorf("the record of the connection is unreadable: %w", err)
	}
	p := &Plan{Client: File{Path: o.File, Before: before, Existed: existed}, home: o.Home, NoRecord: rec == nil, dropRecord: rec != nil}
	if p.restoreBackup(rec) {
		return p, nil
	}
	if !existed {
		if rec == nil {
			return p, nil
		}
		return nil, fmt.Errorf("%s is gone; the servers connect imported are recorded in %s", o.File, recordPath(o.Home, o.File))
	}
	f, err := openServerFile(o.Client, before)
	if err != nil {
		return nil, fmt.Errorf("%s; it is left as it is", located(o.File, before, err))
	}
	if err := p.giveBack(f, rec); err != nil {
		return nil, fmt.Errorf("%s: %w", o.File, err)
	}
	p.Client.After = f.bytes()
	return p, nil
}

// restoreBackup plans the file back byte for byte when it is still as
// connect's only change left it: the backup, or no file at all when
// connect created it.
func (p *Plan) restoreBackup(rec *record) bool {
	if rec == nil || rec.Changes != 1 || !p.Client.Existed || hash(p.Client.Before) != rec.After {
		return false
	}
	if rec.Before == "" {
		p.Client.Remove = true
	} else if b, err := os.ReadFile(rec.Backup); err == nil && hash(b) == rec.Before {
		p.Client.After = b
	} else {
		return false
	}
	p.ByteRestore = true
	p.Restored = names(rec.Imported)
	return true
}

// giveBack takes the evokore entry out of f and, as the record says,
// puts back the entry it replaced and the servers it imported, each in
// front of the server that followed it, and drops a servers section
// connect added.
func (p *Plan) giveBack(f serverFile, rec *record) error {
	present := map[string]bool{}
	for _, n := range f.names() {
		present[n] = true
	}
	if present[Name] {
		if err := f.remove(Name); err != nil {
			return err
		}
	}
	if rec == nil {
		return nil
	}
	if rec.Previous != nil {
		if err := f.restore(Name, *rec.Previous, nextIn(rec.Order, Name, f)); err != nil {
			return err
		}
	}
	for _, im := range rec.Imported {
		if present[im.Name] {
			continue // the user put it back already
		}
		if err := f.restore(im.Name, im.Raw, nextIn(rec.Order, im.Name, f)); err != nil {
			return err
		}
		p.Restored = append(p.Restored, im.Name)
	}
	if rec.KeyAdded {
		return f.dropKeyIfEmpty()
	}
	return nil
}

// nextIn is the first server after name in the recorded order that the
// file has now: the one to put name back in front of.
func nextIn(order []string, name string, f serverFile) string {
	have := map[string]bool{}
	for _, n := range f.names() {
		have[n] = true
	}
	for i, n := range order {
		if n != name {
			continue
		}
		for _, m := range order[i+1:] {
			if have[m] {
				return m
			}
		}
	}
	return ""
}

func names(list []imported) []string {
	var out []string
	for _, im := range list {
		out = append(out, im.Name)
	}
	return out
}

// Changed reports whether the plan changes anything.
func (p *Plan) Changed() bool { return p.Client.Changed() || p.Config.Changed() }

// Diff is a unified diff of every file the plan changes, with the values
// of env and headers entries masked.
func (p *Plan) Diff() string {
	var b bytes.Buffer
	for _, f := range []File{p.Config, p.Client} {
		if f.Path == "" || !f.Changed() {
			continue
		}
		from, to := f.Path, f.Path
		if !f.Existed {
			from = "/dev/null"
		}
		after := f.After
		if f.Remove {
			to, after = "/dev/null", nil
		}
		b.WriteString(udiff.Unified(from, to, string(Mask(f.Before)), string(Mask(after))))
	}
	return b.String()
}

// Apply writes the plan: evokore's config first, then the record, then
// the client's file, each file backed up before it changes, so no step
// that fails midway loses a server. It returns the backups written.
func (p *Plan) Apply(now time.Time) ([]string, error) {
	var backups []string
	stamp := now.UTC().Format("20060102T150405.000Z")
	write := func(f File) error {
		if !f.Changed() {
			return nil
		}
		perm := fs.FileMode(0o600)
		target := f.Path
		if real, err := filepath.EvalSymlinks(f.Path); err == nil {
			// A dotfile manager's symlink stays a symlink.
			target = real
		}
		if info, err := os.Stat(target); err == nil {
			perm = info.Mode().Perm()
		}
		if f.Existed {
			b := f.Path + ".evokore-backup-" + stamp
			if err := statefile.WriteAtomic(b, f.Before, 0o600); err != nil {
				return fmt.Errorf("back up %s: %w", f.Path, err)
			}
			backups = append(backups, b)
			if p.record != nil && f.Path == p.record.File && p.record.Backup == "" {
				p.record.Backup = b
			}
		}
		if f.Remove {
			return os.Remove(target)
		}
		return statefile.WriteAtomic(target, f.After, perm)
	}
	if err := write(p.Config); err != nil {
		return backups, err
	}
	if p.record != nil && p.Client.Existed && p.record.Backup == "" {
		// The backup is named before it is written, so the record that
		// points at it is on disk before the client's file changes.
		p.record.Backup = p.Client.Path + ".evokore-backup-" + stamp
	}
	if p.record != nil {
		if err := p.record.save(p.home); err != nil {
			return backups, fmt.Errorf("record the connection: %w", err)
		}
	}
	if err := write(p.Client); err != nil {
		return backups, err
	}
	if p.dropRecord {
		if err := dropRecord(p.home, p.Client.Path); err != nil {
			return backups, err
		}
	}
	return backups, nil
}

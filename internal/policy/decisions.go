package policy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/evokore/evokore/internal/procgroup"
	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/statefile"
)

// decision is one line of decisions.jsonl.
type decision struct {
	ID       string `json:"id"`
	Decision string `json:"decision"` // approved or denied
	At       int64  `json:"at"`
}

// decisionLog reads decisions.jsonl incrementally: each read returns the
// lines appended since the last. A file replaced (another inode) or
// shrunk is read again from the start. Any line that does not parse is an
// error that names it, returned until the file is fixed: it may have
// been a denial.
type decisionLog struct {
	path   string
	offset int64
	ident  os.FileInfo
}

func (l *decisionLog) read() ([]decision, error) {
	f, err := safefile.OpenOwn(l.path, safefile.MaxStateBytes)
	if errors.Is(err, fs.ErrNotExist) {
		l.offset, l.ident = 0, nil
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("approval decisions %s unreadable: %w", l.path, err)
	}
	defer f.Close()
	st, err := f.Info()
	if err != nil {
		return nil, fmt.Errorf("approval decisions %s unreadable: %w", l.path, err)
	}
	if l.ident == nil || !os.SameFile(l.ident, st) || st.Size() < l.offset {
		l.offset = 0
	}
	l.ident = st
	if st.Size() == l.offset {
		return nil, nil
	}
	if _, err := f.Seek(l.offset, io.SeekStart); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, st.Size()-l.offset))
	if err != nil {
		return nil, fmt.Errorf("approval decisions %s unreadable: %w", l.path, err)
	}
	// Only whole lines: a writer may be mid-append.
	end := bytes.LastIndexByte(data, '\n') + 1
	out, err := parseDecisions(l.path, data[:end], l.offset)
	if err != nil {
		l.offset = 0 // read it all again next time
		return nil, err
	}
	l.offset += int64(end)
	return out, nil
}

// CheckDecisions reads home's approval decisions as a router does and
// returns why it cannot: while it cannot, no approval-gated call runs.
func CheckDecisions(home string) error {
	_, err := (&decisionLog{path: filepath.Join(home, approvalsDir, decisionsFile)}).read()
	return err
}

func parseDecisions(path string, data []byte, base int64) ([]decision, error) {
	var out []decision
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var d decision
		if err := json.Unmarshal(text, &d); err != nil || d.ID == "" || (d.Decision != StateApproved && d.Decision != StateDenied) {
			where := fmt.Sprintf("%s (line %d after byte %d)", path, line, base)
			return nil, fmt.Errorf("approval decisions %s cannot be read, so no approval-gated call runs until it is fixed or removed", where)
		}
		out = append(out, d)
	}
	return out, sc.Err()
}

// ListPending reads every live router's approvals under home, without
// expired ones and those of routers that are gone, newest last.
func ListPending(home string, now time.Time) ([]PendingApproval, error) {
	dir := filepath.Join(home, approvalsDir)
	names, err := filepath.Glob(filepath.Join(dir, "pending-*.json"))
	if err != nil {
		return nil, err
	}
	var out []PendingApproval
	for _, name := range names {
		var f routerFile
		if ok, err := statefile.ReadJSON(name, &f); !ok || err != nil {
			continue // a router writing it right now, or a stray file
		}
		if !procgroup.Alive(f.PID) {
			_ = os.Remove(name) // its approvals died with it
			continue
		}
		for _, p := range f.Approvals {
			if p.ExpiresAt > now.UnixMilli() {
				out = append(out, p)
			}
		}
	}
	decided, err := (&decisionLog{path: filepath.Join(dir, decisionsFile)}).read()
	if err != nil {
		return nil, err
	}
	for i := range out {
		for _, d := range decided {
			if d.ID == out[i].ID && out[i].State != StateDenied {
				out[i].State = d.Decision
			}
		}
	}
	slices.SortStableFunc(out, func(x, y PendingApproval) int { return int(x.CreatedAt - y.CreatedAt) })
	return out, nil
}

// Decide records an operator's decision (StateApproved or StateDenied) on
// a pending approval of a running router. A denial always wins: an
// approved call that has not run yet can still be denied, a denied one is
// never approved.
func Decide(home, id, verdict string, now time.Time) error {
	id = strings.TrimSpace(id)
	pending, err := ListPending(home, now)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(pending, func(p PendingApproval) bool { return p.ID == id })
	if i < 0 {
		return fmt.Errorf("no pending approval %q (see 'evokore approvals list')", id)
	}
	if verdict == StateApproved && pending[i].State == StateDenied {
		return fmt.Errorf("approval %s was denied; it cannot be approved", id)
	}
	line, _ := json.Marshal(decision{ID: id, Decision: verdict, At: now.UnixMilli()})
	return statefile.AppendLine(filepath.Join(home, approvalsDir, decisionsFile), line)
}

// DenyApproval records that an approval must never run.
func DenyApproval(home, id string, now time.Time) error { return Decide(home, id, StateDenied, now) }

// ApproveApproval lets the approved call run once when it is retried.
func ApproveApproval(home, id string, now time.Time) error {
	return Decide(home, id, StateApproved, now)
}

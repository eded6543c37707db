package hooks

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/evokore/evokore/internal/replay"
)

// statusPayload is the part of Claude Code's statusLine input the status
// line shows.
type statusPayload struct {
	SessionID string `json:"session_id"`
	Cwd       string `json:"cwd"`
	Model     struct {
		DisplayName string `json:"display_name"`
	} `json:"model"`
	Workspace struct {
		CurrentDir string `json:"current_dir"`
	} `json:"workspace"`
}

// StatusLine writes the one-line status Claude Code shows under the
// prompt: model, directory, the session's purpose and mode, its tool
// calls and evidence, and its open tasks. It never fails: whatever it
// cannot read is left out.
func StatusLine(home string, in io.Reader, out io.Writer) {
	var p statusPayload
	if in != nil {
		data, _ := io.ReadAll(io.LimitReader(in, maxPayload))
		_ = json.Unmarshal(data, &p)
	}
	parts := []string{"evokore"}
	if p.Model.DisplayName != "" {
		parts = append(parts, p.Model.DisplayName)
	}
	dir := p.Workspace.CurrentDir
	if dir == "" {
		dir = p.Cwd
	}
	if dir != "" {
		parts = append(parts, filepath.Base(dir))
	}
	if p.SessionID != "" && home != "" {
		sid := replay.SafeID(p.SessionID)
		s, _ := Fold(home, sid)
		if s.Purpose != "" {
			parts = append(parts, fmt.Sprintf("%s: %s", or(s.Mode, "dev"), replay.Truncate(s.Purpose, 40)))
		}
		parts = append(parts, fmt.Sprintf("%d calls", s.ToolCount), fmt.Sprintf("%d evidence", s.EvidenceCount))
		if tasks, err := readTasks(replay.SessionFile(home, sid, "-tasks.json")); err == nil && len(tasks) > 0 {
			parts = append(parts, fmt.Sprintf("%d/%d tasks open", len(openTasks(tasks)), len(tasks)))
		}
	}
	// C1 controls too: a terminal may take U+009B for CSI as it takes
	// ESC [.
	line := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.Join(parts, " · "))
	fmt.Fprintln(out, line)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

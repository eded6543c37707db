package nav

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/evokore/evokore/internal/safefile"
)

// MaxWindow caps the lines a read returns on either side of its anchor.
const MaxWindow = 500

var anchorRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`@AI:NAV\[(SEC|END|INS):([a-z0-9-]+)\]\s*(.*)`) })

// Anchor is one @AI:NAV marker.
type Anchor struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Line        int    `json:"line"`
	Description string `json:"description"`
}

// InsertPoint is an INS anchor inside a section.
type InsertPoint struct {
	ID          string `json:"id"`
	Line        int    `json:"line"`
	Description string `json:"description"`
}

// Section is a SEC…END pair.
type Section struct {
	ID           string        `json:"id"`
	StartLine    int           `json:"start_line"`
	EndLine      int           `json:"end_line"`
	LineCount    int           `json:"line_count"`
	Description  string        `json:"description"`
	InsertPoints []InsertPoint `json:"insert_points"`
}

// Map is nav_get_map's answer.
type Map struct {
	File        string    `json:"file"`
	TotalLines  int       `json:"total_lines"`
	AnchorCount int       `json:"anchor_count"`
	Anchors     []Anchor  `json:"anchors"`
	Sections    []Section `json:"sections"`
	Warnings    []string  `json:"warnings"`
}

// Window is nav_read_anchor's answer.
type Window struct {
	File       string `json:"file"`
	AnchorID   string `json:"anchor_id"`
	AnchorType string `json:"anchor_type"`
	AnchorLine int    `json:"anchor_line"`
	Window     struct {
		StartLine int `json:"start_line"`
		EndLine   int `json:"end_line"`
		LineCount int `json:"line_count"`
	} `json:"window"`
	Content string `json:"content"`
}

// Limits that keep one call's memory bounded whatever the file holds.
const (
	// MaxLineBytes is how much of a line is kept: anchors are matched in
	// it and a window shows it. The rest of a longer line is dropped.
	MaxLineBytes = 16 << 10
	// MaxFileBytes is the largest file the tools read.
	MaxFileBytes = 256 << 20
	// MaxAnchors is how many anchors a map lists.
	MaxAnchors = 10_000
	// maxDescription caps an anchor's description, in bytes.
	maxDescription = 1 << 10
)

// cutMark ends a line shown cut at MaxLineBytes.
const cutMark = " …[line cut]"

// lines calls fn with each line of r (without its line ending, cut at
// MaxLineBytes) and its 1-based number until fn returns false.
func lines(r io.Reader, fn func(n int, line string, cut bool) bool) error {
	return safefile.ScanLines(r, MaxLineBytes, func(n int, line []byte, cut bool) bool {
		return fn(n, string(line), cut)
	})
}

func parseAnchor(line string, n int) (Anchor, bool) {
	m := anchorRE().FindStringSubmatch(line)
	if m == nil {
		return Anchor{}, false
	}
	desc := strings.TrimSpace(m[3])
	if len(desc) > maxDescription {
		desc = strings.ToValidUTF8(desc[:maxDescription], "") + "…"
	}
	return Anchor{ID: m[2], Type: m[1], Line: n, Description: desc}, true
}

// BuildMap scans r for anchors and pairs them into sections.
func BuildMap(file string, r io.Reader) (*Map, error) {
	m := &Map{File: file, Anchors: []Anchor{}, Sections: []Section{}, Warnings: []string{}}
	dropped := 0
	err := lines(r, func(n int, line string, _ bool) bool {
		m.TotalLines = n
		if a, ok := parseAnchor(line, n); ok {
			if len(m.Anchors) < MaxAnchors {
				m.Anchors = append(m.Anchors, a)
			} else {
				dropped++
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	m.AnchorCount = len(m.Anchors)
	m.Sections, m.Warnings = sections(m.Anchors)
	if dropped > 0 {
		m.Warnings = append(m.Warnings, fmt.Sprintf("Only the first %d anchors are listed; %d more were skipped", MaxAnchors, dropped))
	}
	return m, nil
}

// sections pairs the first SEC and the first END of each id, and warns
// about duplicates, unpaired anchors and an END that precedes its SEC.
func sections(anchors []Anchor) ([]Section, []string) {
	warnings := []string{}
	var order []string
	count := map[string]int{}
	for _, a := range anchors {
		key := a.Type + ":" + a.ID
		if count[key] == 0 {
			order = append(order, key)
		}
		count[key]++
	}
	for _, key := range order {
		if n := count[key]; n > 1 {
			warnings = append(warnings, fmt.Sprintf("Duplicate anchor '%s' appears %d times", key, n))
		}
	}

	secs, ends := map[string]Anchor{}, map[string]Anchor{}
	var secOrder, endOrder []string
	for _, a := range anchors {
		switch a.Type {
		case "SEC":
			if _, ok := secs[a.ID]; !ok {
				secs[a.ID] = a
				secOrder = append(secOrder, a.ID)
			}
		case "END":
			if _, ok := ends[a.ID]; !ok {
				ends[a.ID] = a
				endOrder = append(endOrder, a.ID)
			}
		}
	}
	for _, id := range secOrder {
		if _, ok := ends[id]; !ok {
			warnings = append(warnings, fmt.Sprintf("Unpaired SEC '%s' has no matching END", id))
		}
	}
	for _, id := range endOrder {
		if _, ok := secs[id]; !ok {
			warnings = append(warnings, fmt.Sprintf("Unpaired END '%s' has no matching SEC", id))
		}
	}

	out := []Section{}
	for _, id := range secOrder {
		sec := secs[id]
		end, ok := ends[id]
		if !ok {
			continue
		}
		if end.Line < sec.Line {
			warnings = append(warnings, fmt.Sprintf("END '%s' at line %d comes before its SEC at line %d; section skipped", id, end.Line, sec.Line))
			continue
		}
		s := Section{ID: id, StartLine: sec.Line, EndLine: end.Line, LineCount: end.Line - sec.Line + 1,
			Description: sec.Description, InsertPoints: []InsertPoint{}}
		for _, a := range anchors {
			if a.Type == "INS" && a.Line >= sec.Line && a.Line <= end.Line {
				s.InsertPoints = append(s.InsertPoints, InsertPoint{ID: a.ID, Line: a.Line, Description: a.Description})
			}
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartLine < out[j].StartLine })
	return out, warnings
}

// ReadWindow finds the first anchor with id (and type, when typ is not
// empty) and returns up to before lines ahead of it and after lines past
// it, each capped at MaxWindow. found is false when no anchor matches.
func ReadWindow(file string, r io.Reader, id, typ string, before, after int) (w *Window, found bool, err error) {
	before = min(max(before, 0), MaxWindow)
	after = min(max(after, 0), MaxWindow)
	ring := make([]string, before) // the last `before` lines, oldest at head
	head, filled := 0, 0
	var out []string
	anchorLine, last := 0, 0
	w = &Window{File: file, AnchorID: id}
	err = lines(r, func(n int, line string, cut bool) bool {
		shown := line
		if cut {
			shown = strings.ToValidUTF8(line, "") + cutMark
		}
		if anchorLine > 0 {
			if n > anchorLine+after {
				return false
			}
			out = append(out, fmt.Sprintf("%d:\t%s", n, shown))
			last = n
			return true
		}
		if a, ok := parseAnchor(line, n); ok && a.ID == id && (typ == "" || a.Type == typ) {
			anchorLine, last = n, n
			w.AnchorType = a.Type
			for i := range filled {
				k := n - filled + i
				out = append(out, fmt.Sprintf("%d:\t%s", k, ring[(head+i)%max(before, 1)]))
			}
			out = append(out, fmt.Sprintf("%d:\t%s", n, shown))
			return after > 0
		}
		if before > 0 {
			if filled < before {
				ring[(head+filled)%before] = shown
				filled++
			} else {
				ring[head] = shown
				head = (head + 1) % before
			}
		}
		return true
	})
	if err != nil || anchorLine == 0 {
		return nil, false, err
	}
	w.AnchorLine = anchorLine
	w.Window.StartLine = anchorLine - filled
	w.Window.EndLine = last
	w.Window.LineCount = len(out)
	w.Content = strings.Join(out, "\n")
	return w, true, nil
}

package workers

import (
	"bufio"
	"bytes"
	"context"
	"io/fs"
	"regexp"
	"strings"
	"sync"

	"github.com/evokore/evokore/internal/safefile"
)

// pattern is one kind of secret.
type pattern struct {
	id       string
	severity string
	re       *regexp.Regexp
	// group is the submatch that is the secret itself (0: the match).
	group int
}

// patterns are compiled when security_scan first runs, not at start-up.
var patterns = sync.OnceValue(func() []pattern {
	return []pattern{
		{"aws_access_key", "high", regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), 0},
		{"private_key_block", "high", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`), 0},
		{"github_token", "high", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b`), 0},
		{"slack_token", "high", regexp.MustCompile(`\bxox[abpors]-[A-Za-z0-9-]{10,}\b`), 0},
		{"google_api_key", "high", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`), 0},
		{"stripe_secret_key", "high", regexp.MustCompile(`\b[rs]k_live_[0-9A-Za-z]{20,}\b`), 0},
		{"jwt", "medium", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b`), 0},
		{"hardcoded_secret", "high", regexp.MustCompile(`(?i)(?:api[_-]?key|secret|token|passw(?:or)?d)["']?\s*[:=]\s*["']([A-Za-z0-9._~+/=-]{16,})["']`), 1},
	}
})

// Finding is one suspected secret.
type Finding struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	// Snippet is the line with the secret redacted.
	Snippet string `json:"snippet"`
}

// Scan is security_scan's result.
type Scan struct {
	Root         string    `json:"root"`
	ScannedFiles int       `json:"scannedFiles"`
	SkippedFiles int       `json:"skippedFiles"`
	FindingCount int       `json:"findingCount"`
	Findings     []Finding `json:"findings"`
	Truncated    bool      `json:"truncated,omitempty"`
}

const (
	scanFileLimit = 1 << 20
	maxFindings   = 100
)

func scan(ctx context.Context, root string) (*Scan, error) {
	s := &Scan{Root: root, Findings: []Finding{}}
	truncated, err := walkFiles(ctx, root, func(rel, abs string, d fs.DirEntry) {
		info, err := d.Info()
		if err != nil || info.Size() > scanFileLimit {
			s.SkippedFiles++
			return
		}
		data, err := safefile.ReadFile(ctx, abs, safefile.Options{MaxBytes: scanFileLimit})
		if err != nil || bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			s.SkippedFiles++ // unreadable or binary
			return
		}
		s.ScannedFiles++
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), scanFileLimit+1)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			for _, p := range patterns() {
				m := p.re.FindStringSubmatchIndex(line)
				if m == nil {
					continue
				}
				s.FindingCount++
				if len(s.Findings) < maxFindings {
					s.Findings = append(s.Findings, Finding{ID: p.id, Severity: p.severity, File: rel, Line: n,
						Snippet: redact(line, m[2*p.group], m[2*p.group+1], p.id == "private_key_block")})
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	s.Truncated = truncated || s.FindingCount > len(s.Findings)
	return s, nil
}

// redact keeps four characters of the secret at [i, j) so a reader can
// tell which one it is, and trims the line to 200 characters.
func redact(line string, i, j int, keepAll bool) string {
	if !keepAll {
		keep := min(4, j-i)
		line = line[:i+keep] + "…[redacted]" + line[j:]
	}
	line = strings.TrimSpace(line)
	if r := []rune(line); len(r) > 200 {
		line = string(r[:200]) + "…"
	}
	return line
}

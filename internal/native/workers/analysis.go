package workers

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/evokore/evokore/internal/safefile"
)

// languages maps file extensions (and a few names) to languages.
var languages = map[string]string{
	".go": "Go", ".ts": "TypeScript", ".tsx": "TypeScript", ".js": "JavaScript", ".mjs": "JavaScript",
	".cjs": "JavaScript", ".jsx": "JavaScript", ".py": "Python", ".rb": "Ruby", ".rs": "Rust",
	".java": "Java", ".kt": "Kotlin", ".swift": "Swift", ".c": "C", ".h": "C", ".cc": "C++",
	".cpp": "C++", ".hpp": "C++", ".cs": "C#", ".php": "PHP", ".sh": "Shell", ".bash": "Shell",
	".zsh": "Shell", ".ps1": "PowerShell", ".sql": "SQL", ".html": "HTML", ".css": "CSS",
	".scss": "CSS", ".md": "Markdown", ".json": "JSON", ".yaml": "YAML", ".yml": "YAML",
	".toml": "TOML", ".cue": "CUE", ".proto": "Protocol Buffers", ".lua": "Lua", ".dart": "Dart",
	".scala": "Scala", ".ex": "Elixir", ".exs": "Elixir", ".erl": "Erlang", ".hs": "Haskell",
	".vue": "Vue", ".svelte": "Svelte", ".tf": "HCL", ".xml": "XML",
	"Dockerfile": "Dockerfile", "Makefile": "Makefile",
}

// Language is one language's share of a tree.
type Language struct {
	Language string `json:"language"`
	Files    int    `json:"files"`
	Lines    int    `json:"lines"`
	Bytes    int64  `json:"bytes"`
}

// FileSize is one of the largest files.
type FileSize struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// Analysis is repo_analysis's result.
type Analysis struct {
	Root         string     `json:"root"`
	TotalFiles   int        `json:"totalFiles"`
	TotalBytes   int64      `json:"totalBytes"`
	TotalLines   int        `json:"totalLines"`
	Languages    []Language `json:"languages"`
	OtherFiles   int        `json:"otherFiles"`
	LargestFiles []FileSize `json:"largestFiles"`
	GitBranch    string     `json:"gitBranch,omitempty"`
	Truncated    bool       `json:"truncated,omitempty"`
}

// lineLimit is the largest file whose lines are counted.
const lineLimit = 8 << 20

func analyse(ctx context.Context, root string) (*Analysis, error) {
	a := &Analysis{Root: root, Languages: []Language{}, LargestFiles: []FileSize{}}
	byLang := map[string]*Language{}
	truncated, err := walkFiles(ctx, root, func(rel, abs string, d fs.DirEntry) {
		info, err := d.Info()
		if err != nil {
			return
		}
		a.TotalFiles++
		a.TotalBytes += info.Size()
		a.LargestFiles = append(a.LargestFiles, FileSize{Path: rel, Bytes: info.Size()})
		if len(a.LargestFiles) > 20 {
			sortSizes(a.LargestFiles)
			a.LargestFiles = a.LargestFiles[:10]
		}
		lang, ok := languages[filepath.Ext(rel)]
		if !ok {
			lang, ok = languages[filepath.Base(rel)]
		}
		if !ok {
			a.OtherFiles++
			return
		}
		l := byLang[lang]
		if l == nil {
			l = &Language{Language: lang}
			byLang[lang] = l
		}
		l.Files++
		l.Bytes += info.Size()
		if info.Size() <= lineLimit {
			n := countLines(ctx, abs)
			l.Lines += n
			a.TotalLines += n
		}
	})
	if err != nil {
		return nil, err
	}
	a.Truncated = truncated
	for _, l := range byLang {
		a.Languages = append(a.Languages, *l)
	}
	sort.Slice(a.Languages, func(i, j int) bool {
		x, y := a.Languages[i], a.Languages[j]
		if x.Files != y.Files {
			return x.Files > y.Files
		}
		return x.Language < y.Language
	})
	sortSizes(a.LargestFiles)
	if len(a.LargestFiles) > 10 {
		a.LargestFiles = a.LargestFiles[:10]
	}
	a.GitBranch = gitBranch(root)
	return a, nil
}

func sortSizes(s []FileSize) {
	sort.Slice(s, func(i, j int) bool {
		if s[i].Bytes != s[j].Bytes {
			return s[i].Bytes > s[j].Bytes
		}
		return s[i].Path < s[j].Path
	})
}

// countLines counts newline-terminated lines, plus a last line without
// one.
func countLines(ctx context.Context, path string) int {
	// The walk saw a regular file, but the path may have been swapped
	// for a FIFO or a device since.
	f, err := safefile.Open(path, safefile.Options{MaxBytes: lineLimit})
	if err != nil {
		return 0
	}
	defer f.Close()
	r := f.Reader(ctx)
	buf := make([]byte, 32<<10)
	n, last := 0, byte('\n')
	for {
		k, err := r.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return n
		}
	}
	if last != '\n' {
		n++
	}
	return n
}

// gitBranch reads the checked-out branch from .git/HEAD, or the short
// commit of a detached head; empty when root is no checkout.
func gitBranch(root string) string {
	b, err := safefile.ReadFile(context.Background(), filepath.Join(root, ".git", "HEAD"), safefile.Options{MaxBytes: 4 << 10})
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(b))
	if ref, ok := strings.CutPrefix(head, "ref: refs/heads/"); ok {
		return ref
	}
	if len(head) >= 12 {
		return "detached at " + head[:12]
	}
	return ""
}

package skills

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"mime"
	"net/url"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/safefile"
)

// The library as the Skills Extension serves it (SEP-2640, extension
// io.modelcontextprotocol/skills; docs/skills-extension.md).
//
// A skill there is a directory addressed as skill://<skill-path>/<file>,
// whose last <skill-path> segment is the frontmatter's name and whose
// SKILL.md is named explicitly. The library's skills map onto it so:
//
//	cat/sub/dir/SKILL.md   skill://cat/sub/<name>/SKILL.md and every
//	                       file below dir, at its path relative to dir
//	cat/sub/file.md        skill://cat/sub/<name>/SKILL.md, the file
//	                       itself and nothing else
//
// The older skill://cat/sub/name URIs (the body alone, the natives' and
// resources/list's) are untouched: a client that does not use the
// extension sees what it saw before, and resources/list shows each
// served SKILL.md after them (package server).
//
// A skill the extension cannot carry is left out of it and reported: a
// name the Agent Skills rules refuse (1 to 64 lower-case letters, digits
// and single hyphens), a description empty or over 1024 characters, more
// than MaxSkillFiles files or MaxSkillBytes bytes, or a path another
// skill took first. The manifest of every skill is complete: each
// regular file below its directory (symbolic links are never followed;
// .git and node_modules are not the skill's), with its SHA-256 digest and
// size.

// ExtensionID is the Skills Extension's identifier (SEP-2133 naming).
const ExtensionID = "io.modelcontextprotocol/skills"

// The interoperability baseline of the extension: a host must accept a
// skill of this many files and bytes, so a server stays within it.
const (
	MaxSkillFiles = 512
	MaxSkillBytes = 16 << 20
)

// CodeExtension is the diagnostic code of a skill the extension leaves
// out.
const CodeExtension = "skill-extension"

// Entry is one skill as skills/list and skills/get carry it.
type Entry struct {
	// URI is the skill's SKILL.md.
	URI string `json:"uri"`
	// Frontmatter is the SKILL.md frontmatter as JSON, verbatim.
	Frontmatter json.RawMessage `json:"frontmatter"`
	// Resources are every file of the skill, SKILL.md first.
	Resources []File `json:"resources"`
}

// File is one file of a skill's manifest.
type File struct {
	URI string `json:"uri"`
	// Digest is "sha256:" and 64 lower-case hex digits of the bytes.
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// Name is the skill's name: the last segment of its path.
func (e *Entry) Name() string {
	dir := strings.TrimSuffix(e.URI, "/"+SkillFile)
	return dir[strings.LastIndexByte(dir, '/')+1:]
}

// Description is the frontmatter's description ("" when it has none).
func (e *Entry) Description() string {
	var fm struct {
		Description string `json:"description"`
	}
	_ = json.Unmarshal(e.Frontmatter, &fm)
	return fm.Description
}

// Served is the library as the extension serves it; it belongs to one
// Index and never changes.
type Served struct {
	// Entries are ordered by URI.
	Entries []*Entry
	// Diagnostics say which skills are left out, and why.
	Diagnostics config.Diagnostics

	byURI map[string]*Entry
	// files maps a file's URI to its path below the library root.
	files map[string]servedFile
	// skill maps an entry's URI to the library skill it serves.
	skill map[string]*Skill
}

type servedFile struct {
	path   string
	digest string
	// owner is the URI of the skill's SKILL.md.
	owner string
}

// Entry returns the entry whose SKILL.md is uri, nil when none.
func (sv *Served) Entry(uri string) *Entry { return sv.byURI[uri] }

// Owner returns the entry whose manifest lists the file uri.
func (sv *Served) Owner(uri string) (*Entry, bool) {
	f, ok := sv.files[uri]
	if !ok {
		return nil, false
	}
	return sv.byURI[f.owner], true
}

// FileMIME is the media type a skill file is served with: markdown for
// .md, else by its extension, else plain text or bytes as resources/read
// decides by content.
func FileMIME(uri string) string {
	ext := strings.ToLower(path.Ext(uri))
	if ext == ".md" || ext == ".markdown" {
		return "text/markdown"
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "text/plain"
}

// Skill returns the library skill an entry serves.
func (sv *Served) Skill(e *Entry) *Skill { return sv.skill[e.URI] }

// Extension is the index as the extension serves it, built on first use
// (reading every file of every skill) and kept with the index.
func (ix *Index) Extension() *Served {
	if ix.served == nil {
		return &Served{byURI: map[string]*Entry{}}
	}
	return ix.served()
}

// ReadFile reads one file of a served skill: its bytes as they are now,
// and ok false when uri is no such file. A file changed since the index
// was built is read as it is now; its digest then says it changed.
func (ix *Index) ReadFile(uri string) (b []byte, ok bool, err error) {
	f, ok := ix.Extension().files[uri]
	if !ok {
		return nil, false, nil
	}
	b, err = safefile.LoadFS(ix.Source.FS, f.path, ix.Source.display(f.path), MaxSkillBytes)
	return b, true, err
}

// serve builds the extension's view of the index's skills.
func serve(src Source, skills []*Skill) *Served {
	sv := &Served{byURI: map[string]*Entry{}, files: map[string]servedFile{}, skill: map[string]*Skill{}}
	for _, s := range skills {
		if s.Remote != nil {
			continue
		}
		e, files, err := serveSkill(src, s)
		if err == nil && sv.byURI[e.URI] != nil {
			err = fmt.Errorf("its extension URI %s is taken by %s", e.URI, sv.skill[e.URI].File)
		}
		if err != nil {
			sv.Diagnostics = append(sv.Diagnostics, config.Diagnostic{
				Position: config.Position{File: s.File, Line: 1}, Severity: config.SeverityWarning, Code: CodeExtension,
				Message: "not served by the Skills Extension: " + err.Error()})
			continue
		}
		sv.byURI[e.URI] = e
		sv.skill[e.URI] = s
		sv.Entries = append(sv.Entries, e)
		for uri, f := range files {
			sv.files[uri] = f
		}
	}
	slices.SortFunc(sv.Entries, func(a, b *Entry) int { return cmp.Compare(a.URI, b.URI) })
	return sv
}

// serveSkill maps one skill onto the extension.
func serveSkill(src Source, s *Skill) (*Entry, map[string]servedFile, error) {
	b, err := safefile.LoadFS(src.FS, s.Path, src.display(s.Path), safefile.MaxConfigBytes)
	if err != nil {
		return nil, nil, err
	}
	fm, name, err := frontmatterJSON(b)
	if err != nil {
		return nil, nil, err
	}
	prefix := uriPart(s.Category, false)
	if s.Subcategory != "" {
		prefix += "/" + uriPart(s.Subcategory, true)
	}
	root := URIScheme + prefix + "/" + name
	e := &Entry{URI: root + "/" + SkillFile, Frontmatter: fm}
	files := map[string]servedFile{}
	add := func(uri, p string, content []byte) {
		sum := sha256.Sum256(content)
		f := File{URI: uri, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(content))}
		e.Resources = append(e.Resources, f)
		files[uri] = servedFile{path: p, digest: f.Digest, owner: e.URI}
	}
	add(e.URI, s.Path, b)
	if path.Base(s.Path) != SkillFile {
		return e, files, nil // a skill of one file
	}
	dir := path.Dir(s.Path)
	total := int64(len(b))
	err = fs.WalkDir(src.FS, dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && p != dir && (d.Name() == ".git" || d.Name() == "node_modules"):
			return fs.SkipDir
		case !d.Type().IsRegular() || p == s.Path:
			return nil // directories, symbolic links and devices are no files of a skill
		}
		if len(e.Resources) >= MaxSkillFiles {
			return fmt.Errorf("it has more than %d files", MaxSkillFiles)
		}
		content, err := safefile.LoadFS(src.FS, p, src.display(p), MaxSkillBytes-total)
		if err != nil {
			return fmt.Errorf("%s: %w (a skill holds at most %d bytes)", p, err, MaxSkillBytes)
		}
		total += int64(len(content))
		add(root+"/"+escapePath(strings.TrimPrefix(p, dir+"/")), p, content)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(e.Resources[1:], func(a, b File) int { return cmp.Compare(a.URI, b.URI) })
	return e, files, nil
}

// escapePath escapes each segment of a relative path for a URI.
func escapePath(rel string) string {
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// frontmatterJSON renders a document's frontmatter as JSON and returns
// its name, refusing what the Agent Skills rules refuse.
func frontmatterJSON(src []byte) (json.RawMessage, string, error) {
	yamlSrc, _, _, has, closed := config.SplitSkillDocument(src)
	if !has || !closed {
		return nil, "", fmt.Errorf("it has no closed frontmatter")
	}
	var fm map[string]any
	if err := yaml.Unmarshal(yamlSrc, &fm); err != nil {
		return nil, "", fmt.Errorf("its frontmatter does not decode: %w", err)
	}
	name, _ := fm["name"].(string)
	if err := ValidName(name); err != nil {
		return nil, "", err
	}
	desc, _ := fm["description"].(string)
	if n := utf8.RuneCountInString(desc); n < 1 || n > 1024 {
		return nil, "", fmt.Errorf("its description must be 1 to 1024 characters")
	}
	b, err := json.Marshal(jsonValue(fm))
	if err != nil {
		return nil, "", fmt.Errorf("its frontmatter has no JSON form: %w", err)
	}
	return b, name, nil
}

// jsonValue turns the maps YAML may decode with keys of any type into
// maps JSON can carry.
func jsonValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = jsonValue(x)
		}
		return v
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[fmt.Sprint(k)] = jsonValue(x)
		}
		return out
	case []any:
		for i, x := range v {
			v[i] = jsonValue(x)
		}
	}
	return v
}

// ValidName checks a skill name as the Agent Skills specification does:
// 1 to 64 lower-case letters, digits and hyphens, no hyphen at either end
// nor two in a row.
func ValidName(name string) error {
	bad := fmt.Errorf("its name %q is not an Agent Skills name (1 to 64 lower-case letters, digits and single hyphens)", name)
	if n := utf8.RuneCountInString(name); n < 1 || n > 64 || name != strings.ToLower(name) ||
		strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") || strings.Contains(name, "--") {
		return bad
	}
	for _, r := range name {
		if r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return bad
		}
	}
	return nil
}

// Pinned is what a child's skill is pinned by: its SKILL.md URI (the
// child's), its name, and the hash of its manifest (ManifestHash).
type Pinned struct {
	URI   string
	Name  string
	Hash  string
	Files []File
}

// ManifestHash hashes a manifest: every file's URI, digest and size, in
// the order of their URIs, so a file changed, added or removed changes it.
func ManifestHash(files []File) string {
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b File) int { return cmp.Compare(a.URI, b.URI) })
	h := sha256.New()
	for _, f := range sorted {
		fmt.Fprintf(h, "%s\x00%s\x00%d\n", f.URI, f.Digest, f.Size)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Remote marks a skill a child serves by the Skills Extension: it is
// searched with the library's, and execute_skill runs it only when the
// child's config allows it (Execute).
type Remote struct {
	Server  string
	Execute bool
}

// RemoteSkill makes a child's skill searchable: name is its name as the
// router serves it (prefixed), uri its SKILL.md's router URI, frontmatter
// the listing's, and doc the SKILL.md when it was fetched (nil: the
// frontmatter alone, so no body and nothing to run).
func RemoteSkill(server, name, uri string, frontmatter json.RawMessage, doc []byte, execute bool) *Skill {
	src := doc
	if src == nil {
		// JSON is YAML: the frontmatter as the listing carries it.
		src = []byte("---\n" + string(frontmatter) + "\n---\n")
	}
	s, _, ok := parseSkill(candidate{rel: uri, category: server, fallback: name}, src, uri)
	if !ok {
		var fm struct {
			Description string `json:"description"`
		}
		_ = json.Unmarshal(frontmatter, &fm)
		s = &Skill{Description: fm.Description}
	}
	s.Name, s.Key, s.Category, s.Subcategory, s.Depth = name, strings.ToLower(server+"/"+name), server, "", 0
	s.URI, s.File, s.Path, s.fallback = uri, uri, "", name
	s.Remote = &Remote{Server: server, Execute: execute}
	return s
}

// withRemote is the index with a child's skills added, for search and
// lookups; the extension's view stays the library's own.
func (ix *Index) withRemote(remote []*Skill) *Index {
	m := &Index{Source: ix.Source, Diagnostics: ix.Diagnostics, Built: ix.Built, Took: ix.Took}
	all := make([]*Skill, 0, len(ix.Skills)+len(remote))
	for _, s := range ix.Skills {
		c := *s // assemble sets fields of its skills: the library's index is read meanwhile
		all = append(all, &c)
	}
	for _, s := range remote {
		c := *s
		all = append(all, &c)
	}
	m.assemble(all)
	m.served = ix.served
	return m
}

package skilltools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/netguard"
	"github.com/evokore/evokore/internal/skills"
)

// Download limits.
const (
	maxDownload   = 1 << 20 // 1 MB
	maxRedirects  = 5
	fetchTimeout  = 30 * time.Second
	defaultRemote = "Remote Skills"
)

// httpClient downloads skills and registry indexes under netguard's
// private-address policy. Environment proxies are ignored: going through one would hide the
// target's address from the check.
func httpClient(allowPrivate bool) *http.Client {
	dialer := netguard.Dialer(10*time.Second, allowPrivate, "EVOKORE_HTTP_ALLOW_PRIVATE")
	return &http.Client{
		Timeout: fetchTimeout,
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            dialer.DialContext,
			TLSHandshakeTimeout:    10 * time.Second,
			ResponseHeaderTimeout:  fetchTimeout,
			MaxResponseHeaderBytes: 64 << 10,
			ForceAttemptHTTP2:      true,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to a %s URL refused: only http and https are allowed", req.URL.Scheme)
			}
			return nil
		},
	}
}

// download fetches u with the size cap; the error text is for the model.
func (t *Tools) download(ctx context.Context, u string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/markdown, text/plain, application/json;q=0.9, */*;q=0.5")
	resp, err := httpClient(t.opts.AllowPrivate).Do(req)
	if err != nil {
		var be *netguard.BlockedError
		switch {
		case errors.As(err, &be):
			return nil, be
		case errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err):
			return nil, fmt.Errorf("timed out after %s; the host may be slow or unreachable", fetchTimeout)
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := fmt.Sprintf("HTTP %s", resp.Status)
		switch resp.StatusCode {
		case http.StatusNotFound:
			msg += ". Check the URL; for GitHub use the raw file (https://raw.githubusercontent.com/<owner>/<repo>/<ref>/<path>), not the page that shows it."
		case http.StatusUnauthorized, http.StatusForbidden:
			msg += ". The file needs authentication or is private; use a public raw URL."
		}
		return nil, errors.New(msg)
	}
	if resp.ContentLength > maxDownload {
		return nil, fmt.Errorf("the file is %d bytes, over the 1 MB limit", resp.ContentLength)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDownload+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxDownload {
		return nil, errors.New("the file is over the 1 MB limit")
	}
	return body, nil
}

// unsafeChars are replaced in names and categories.
const unsafeChars = `<>:"|?*`

// sanitizeSegment cleans a name or category for use as one directory
// name. It refuses rather than repairs anything that could leave the
// skills directory.
func sanitizeSegment(kind, s string) (string, error) {
	s = strings.TrimSpace(s)
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(unsafeChars, r) {
			return '_'
		}
		return r
	}, s)
	switch {
	case s == "":
		return "", fmt.Errorf("the %s is empty", kind)
	case strings.ContainsAny(s, `/\`) || strings.Contains(s, ".."):
		return "", fmt.Errorf("the %s %q is not a single directory name: '/', '\\' and '..' are not allowed (path traversal)", kind, s)
	case s == ".":
		return "", fmt.Errorf("the %s %q is not a directory name", kind, s)
	}
	return s, nil
}

// inside reports whether target is root or below it, after resolving
// the symbolic links of the longest part of target that exists.
func inside(root, target string) bool {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	t := filepath.Clean(target)
	var rest []string
	for {
		if real, err := filepath.EvalSymlinks(t); err == nil {
			t = filepath.Join(append([]string{real}, rest...)...)
			break
		}
		parent := filepath.Dir(t)
		if parent == t {
			return false
		}
		rest = append([]string{filepath.Base(t)}, rest...)
		t = parent
	}
	rel, err := filepath.Rel(r, t)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// writeFile writes data atomically: a temporary file renamed over the
// target.
func writeFile(target string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(target), ".skill-*.tmp")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// fetchIn is fetch_skill's arguments.
type fetchIn struct {
	URL       string `json:"url"`
	Category  string `json:"category"`
	Name      string `json:"name"`
	Overwrite bool   `json:"overwrite"`
	Checksum  string `json:"checksum"`
}

func (t *Tools) fetchSkill(ctx context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in fetchIn
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	u, err := url.Parse(strings.TrimSpace(in.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return native.Errorf("Only http and https URLs are supported: %q", in.URL), nil
	}
	root, err := t.lib.Writable()
	if err != nil {
		return native.Errorf("Cannot save a fetched skill: %v", err), nil
	}
	body, err := t.download(ctx, u.String())
	if err != nil {
		return native.Errorf("Failed to fetch skill from %s: %v", u.Redacted(), err), nil
	}
	sum := sha256.Sum256(body)
	got := hex.EncodeToString(sum[:])
	if want := strings.ToLower(strings.TrimSpace(in.Checksum)); want != "" && want != got {
		return native.Errorf("Checksum verification failed: expected sha256 %s, got %s. Nothing was saved.", want, got), nil
	}
	fm, ds, ok := skills.ParseDocument(u.String(), body)
	if !ok {
		return native.Errorf("Invalid skill format: the file does not open with YAML frontmatter (a '---' line, fields such as name and description, and a closing '---'). Nothing was saved."), nil
	}
	if ds != nil {
		return native.Errorf("Invalid skill format: its frontmatter does not validate. Nothing was saved.\n%s", ds.Error()), nil
	}
	name, target, refused := t.placeSkill(root, u, in, fm)
	if refused != nil {
		return refused, nil
	}
	if err := writeFile(target, body); err != nil {
		return native.Errorf("Failed to save the skill to %s: %v", target, err), nil
	}
	r := t.lib.Refresh()
	return native.Text("Fetched skill '%s' (%d bytes, sha256 %s) from %s into %s. Index auto-refreshed: %d skills.",
		name, len(body), got, u.Redacted(), target, r.Total), nil
}

// placeSkill decides where a fetched skill is saved under root: its
// name and category (see skillPlace), each a safe path segment, the file
// inside root, not another installed skill's key, and not over an
// existing file unless in.Overwrite. It returns the name and the file,
// or why it refuses.
func (t *Tools) placeSkill(root string, u *url.URL, in fetchIn, fm *config.SkillFrontmatter) (name, target string, refused *mcp.CallToolResult) {
	name, category := skillPlace(u, in, fm)
	var err error
	if name, err = sanitizeSegment("skill name", name); err != nil {
		return "", "", native.Errorf("Refusing to save the skill: %v.", err)
	}
	if category, err = sanitizeSegment("category", category); err != nil {
		return "", "", native.Errorf("Refusing to save the skill: %v.", err)
	}
	target = filepath.Join(root, category, name, skills.SkillFile)
	if !inside(root, target) {
		return "", "", native.Errorf("Refusing to save the skill: %s is outside the skills directory %s (path traversal).", target, root)
	}
	// The index knows a skill by category/name, its frontmatter name
	// first: saved in another folder, a download naming an installed
	// skill's key would replace that skill in the index (or be ignored
	// itself), whatever overwrite says. Only its own file may be replaced.
	keyName := fm.Name
	if keyName == "" {
		keyName = name
	}
	if s := t.lib.Index().ByKey(category + "/" + keyName); s != nil && s.Path != path.Join(category, name, skills.SkillFile) {
		return "", "", native.Errorf("Refusing to save the skill: its key %s is that of the installed skill %s, which it would replace in the index. Nothing was saved. Replace that file itself, or give the download another name in its frontmatter.",
			s.Key, s.File)
	}
	if _, err := os.Lstat(target); err == nil && !in.Overwrite {
		return "", "", native.Errorf("A skill already exists at %s. Pass overwrite: true to replace it.", target)
	}
	return name, target, nil
}

// skillPlace is a fetched skill's name and category before they are
// checked: the caller's, else the frontmatter's; a name else from the
// URL (the file's, or its folder's for a SKILL.md), a category else
// defaultRemote.
func skillPlace(u *url.URL, in fetchIn, fm *config.SkillFrontmatter) (name, category string) {
	name = strings.TrimSpace(in.Name)
	if name == "" {
		name = fm.Name
	}
	if name == "" {
		base := path.Base(u.Path)
		if strings.EqualFold(base, skills.SkillFile) {
			base = path.Base(path.Dir(u.Path))
		}
		name = strings.TrimSuffix(base, path.Ext(base))
	}
	category = strings.TrimSpace(in.Category)
	if category == "" {
		category = fm.Category
	}
	if category == "" {
		category = defaultRemote
	}
	return name, category
}

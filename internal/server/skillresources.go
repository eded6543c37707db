package server

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/skills"
)

// The Skills Extension's skills as resources (SEP-2640, Resource Mapping,
// Resource Metadata and Reading Directories; docs/skills-extension.md).
//
// resources/list shows, after the router's own resources and the older
// skill://<category>/<name> ones (the body alone, as before), the SKILL.md
// of every skill the session is served by the extension, library's and
// children's, named and described by its frontmatter: a client that knows
// only resources finds the skills. A skill's other files are not listed
// (a library may hold 512 files a skill, and resources/list is not
// paged): they are in its manifest, and resources/directory/read lists
// any directory of a served skill, from the same manifests. Both the
// listing and reads apply the rule skills/list does: what the session's
// role or profile leaves out is neither listed nor read, under either
// URI.

// directoryMIME is a directory resource's media type.
const directoryMIME = "inode/directory"

// skillResources are the SKILL.md resources sess is served.
func (s *Server) skillResources(sess *session.Session) []*mcp.Resource {
	served := s.skillsFor(sess)
	out := make([]*mcp.Resource, 0, len(served))
	for _, sk := range served {
		r := &mcp.Resource{URI: sk.entry.URI, Name: sk.entry.Name(), Description: sk.entry.Description(), MIMEType: "text/markdown"}
		for _, f := range sk.entry.Resources {
			if f.URI == sk.entry.URI {
				r.Size = f.Size
			}
		}
		out = append(out, r)
	}
	return out
}

// legacyHidden reports whether uri is the older skill:// URI of a
// library skill sess may not see.
func (s *Server) legacyHidden(sess *session.Session, ix *skills.Index, uri string) bool {
	if !strings.HasPrefix(uri, skills.URIScheme) {
		return false
	}
	sk := ix.ByURI(uri)
	return sk != nil && sk.Remote == nil && !s.skillAllowed(sess, sk.Name, sk.Key)
}

// visibleContent is the router's own resources less the older skill://
// resources of skills sess may not see; list is not changed.
func (s *Server) visibleContent(sess *session.Session, list []*mcp.Resource) []*mcp.Resource {
	if s.skillLib == nil {
		return list
	}
	ix := s.skillLib.Index()
	out := make([]*mcp.Resource, 0, len(list))
	for _, r := range list {
		if !s.legacyHidden(sess, ix, r.URI) {
			out = append(out, r)
		}
	}
	return out
}

// directoryResult is a resources/directory/read answer.
type directoryResult struct {
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
	ResultType string          `json:"resultType,omitempty"`
}

// readSkillDirectory answers resources/directory/read: the direct
// children of a directory of the skills sess is served, a page at a
// time; any other URI is -32602.
func (s *Server) readSkillDirectory(_ context.Context, sess *session.Session, sessionless bool, params []byte) ([]byte, error) {
	var p struct {
		URI    string  `json:"uri"`
		Cursor *string `json:"cursor"`
	}
	if json.Unmarshal(params, &p) != nil || p.URI == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "resources/directory/read needs params.uri, the URI of a directory"}
	}
	children := skillDirectory(s.skillsFor(sess), p.URI)
	if children == nil {
		data, _ := json.Marshal(map[string]string{"uri": p.URI})
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: p.URI + " is not a directory of a skill this server serves", Data: data}
	}
	pg, next, err := page(children, p.Cursor)
	if err != nil {
		return nil, err
	}
	res := directoryResult{Resources: pg, NextCursor: next}
	if sessionless {
		res.ResultType = "complete"
	}
	return json.Marshal(res)
}

// skillDirectory lists the direct children of dir among the files of
// served, ordered by URI: files with their media type and size,
// subdirectories as directory resources. It is nil when dir holds none
// of their files, so is no directory (a file, an unknown URI, a skill
// the caller is not served).
func skillDirectory(served []servedSkill, dir string) []*mcp.Resource {
	if !strings.HasPrefix(dir, skills.URIScheme) || strings.HasSuffix(dir, "/") || len(dir) == len(skills.URIScheme) {
		return nil
	}
	prefix := dir + "/"
	seen := map[string]bool{}
	var out []*mcp.Resource
	for _, sk := range served {
		for _, f := range sk.entry.Resources {
			rest, ok := strings.CutPrefix(f.URI, prefix)
			if !ok || rest == "" {
				continue
			}
			r := &mcp.Resource{URI: f.URI, MIMEType: skills.FileMIME(f.URI), Size: f.Size}
			if seg, _, nested := strings.Cut(rest, "/"); nested {
				r = &mcp.Resource{URI: prefix + seg, MIMEType: directoryMIME}
			}
			if seen[r.URI] {
				continue // a nested skill's files are its enclosing skill's too
			}
			seen[r.URI] = true
			r.Name = segmentName(r.URI)
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *mcp.Resource) int { return strings.Compare(a.URI, b.URI) })
	return out
}

// segmentName is the last segment of a URI, unescaped.
func segmentName(uri string) string {
	seg := uri[strings.LastIndexByte(uri, '/')+1:]
	if name, err := url.PathUnescape(seg); err == nil {
		return name
	}
	return seg
}

package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/skills"
)

// The Skills Extension (SEP-2640, io.modelcontextprotocol/skills; see
// docs/skills-extension.md): skills/list and skills/get are the router's
// own methods (ingress.Methods, both transports, both eras), and the
// files of the skills they list are read with resources/read.
//
// A session is served the library's skills (skills.Served) and the
// children's that are not held (proxy.ChildSkill), less what its role
// denies and its profile leaves out; skills/get, resources/read and
// execute_skill refuse exactly what skills/list leaves out. A child's
// file is read from the child and checked against the digest pinned for
// it: a child that changes a file without changing its listing gets an
// error, not the new text.

// skillPage is how many skills a skills/list page holds.
const skillPage = 100

// servedSkill is one skill as a session may be served it.
type servedSkill struct {
	entry *skills.Entry
	// names are what roles and profiles name it by.
	names []string
	// child is set for a child's skill.
	child *proxy.ChildSkill
}

// skillMethods are the extension's methods.
func (s *Server) skillMethods() ingress.Methods {
	return ingress.Methods{
		"skills/list": s.skillMethod(s.listSkills),
		"skills/get":  s.skillMethod(s.getSkill),
		// Reading Directories; declared by directoryRead (package handshake).
		"resources/directory/read": s.skillMethod(s.readSkillDirectory),
	}
}

// skillMethod takes a request of a session past its handshake, or a
// sessionless one.
func (s *Server) skillMethod(serve func(ctx context.Context, sess *session.Session, sessionless bool, params []byte) ([]byte, error)) ingress.Method {
	return func(r ingress.Request) (ingress.Call, bool) {
		if r.Version() == "" && !r.Sessionless() {
			return nil, false // before the handshake: the SDK refuses it
		}
		sess, sessionless, params := r.View.Session(), r.Sessionless(), r.Message.Params
		return ingress.Result(func(ctx context.Context) ([]byte, error) {
			b, err := serve(ctx, sess, sessionless, params)
			var we *jsonrpc.Error
			if err != nil && !errors.As(err, &we) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			}
			return b, err
		}), true
	}
}

// skillsFor lists the skills sess is served, the library's first.
func (s *Server) skillsFor(sess *session.Session) []servedSkill {
	var out []servedSkill
	seen := map[string]bool{}
	if s.skillLib != nil {
		ix := s.skillLib.Index()
		sv := ix.Extension()
		for _, e := range sv.Entries {
			sk := sv.Skill(e)
			out = append(out, servedSkill{entry: e, names: []string{e.Name(), sk.Key}})
			seen[e.URI] = true
		}
	}
	for _, c := range s.proxy.Skills() {
		if c.Held != "" || seen[c.Entry.URI] {
			continue // a held skill is served to nobody; the library's URIs win
		}
		out = append(out, servedSkill{entry: c.Entry, names: []string{c.Name}, child: &c})
	}
	kept := out[:0]
	for _, sk := range out {
		if s.skillAllowed(sess, sk.names...) {
			kept = append(kept, sk)
		}
	}
	return kept
}

// skillAllowed reports whether sess's role and profile let it see a
// skill known by names.
func (s *Server) skillAllowed(sess *session.Session, names ...string) bool {
	return s.gen.Load().profile.Profile.ServesSkill(names...) && s.policy.Rules().RBAC.SkillAllowed(sess.Role, names...)
}

// skillsResult is a skills/list answer.
type skillsResult struct {
	Skills     []*skills.Entry `json:"skills"`
	NextCursor string          `json:"nextCursor,omitempty"`
	// The sessionless era's result type and list caching (SEP-2549): a
	// listing depends on the caller's role and profile.
	ResultType string `json:"resultType,omitempty"`
	*cacheHint
}

// cacheHint is what a 2026-07-28 skills/list or skills/get carries (its
// CacheableResult): ttlMs 0, for a listing changes with a reload or a
// child's update, and private, for it depends on the caller's role and
// profile.
type cacheHint struct {
	TTLMs      int    `json:"ttlMs"`
	CacheScope string `json:"cacheScope"`
}

// listSkills answers skills/list, a page at a time.
func (s *Server) listSkills(_ context.Context, sess *session.Session, sessionless bool, params []byte) ([]byte, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if len(params) > 0 && json.Unmarshal(params, &p) != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "skills/list params must be an object with an optional string cursor"}
	}
	pg, next, err := page(s.skillsFor(sess), p.Cursor)
	if err != nil {
		return nil, err
	}
	res := skillsResult{Skills: make([]*skills.Entry, 0, len(pg)), NextCursor: next}
	for _, sk := range pg {
		res.Skills = append(res.Skills, sk.entry)
	}
	if sessionless {
		res.ResultType, res.cacheHint = "complete", &cacheHint{CacheScope: "private"}
	}
	return json.Marshal(res)
}

// page is the page of all a cursor (nil: the first) names, and the
// cursor of the next page ("" after the last).
func page[T any](all []T, cur *string) ([]T, string, error) {
	offset := 0
	if cur != nil {
		c, ok := decodeCursor(*cur)
		if !ok || c.Offset > len(all) {
			return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid cursor"}
		}
		offset = c.Offset
	}
	end := min(offset+skillPage, len(all))
	next := ""
	if end < len(all) {
		next = cursor{Offset: end}.encode()
	}
	return all[offset:end], next, nil
}

// skillNotFound is the error for a skill URI the session is not served:
// -32602 with the URI, as resources/read answers an unknown resource.
func skillNotFound(uri string) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Skill not found: " + uri, Data: data}
}

// getSkill answers skills/get.
func (s *Server) getSkill(_ context.Context, sess *session.Session, sessionless bool, params []byte) ([]byte, error) {
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(params, &p) != nil || p.URI == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "skills/get needs params.uri, the URI of a skill's SKILL.md"}
	}
	for _, sk := range s.skillsFor(sess) {
		if sk.entry.URI == p.URI {
			res := struct {
				Skill      *skills.Entry `json:"skill"`
				ResultType string        `json:"resultType,omitempty"`
				*cacheHint
			}{Skill: sk.entry}
			if sessionless {
				res.ResultType, res.cacheHint = "complete", &cacheHint{CacheScope: "private"}
			}
			return json.Marshal(res)
		}
	}
	return nil, skillNotFound(p.URI)
}

// readSkillFile answers resources/read of a file of a skill the
// extension serves, and refuses the older skill:// URI of a skill the
// session is not served; ok is false for any other URI, which the other
// resources answer.
func (v *View) readSkillFile(ctx context.Context, p *mcp.ReadResourceParams) (res *mcp.ReadResourceResult, ok bool, err error) {
	s := v.srv
	if s.skillLib != nil {
		ix := s.skillLib.Index()
		if e, owned := ix.Extension().Owner(p.URI); owned {
			if !s.skillAllowed(v.sess, e.Name(), ix.Extension().Skill(e).Key) {
				return nil, true, skillNotFound(p.URI)
			}
			b, found, err := ix.ReadFile(p.URI)
			if err != nil || !found {
				return nil, true, skillNotFound(p.URI)
			}
			return fileContents(p.URI, b), true, nil
		}
	}
	if s.skillLib != nil && s.legacyHidden(v.sess, s.skillLib.Index(), p.URI) {
		return nil, true, skillNotFound(p.URI) // the older URI of a skill the session is not served
	}
	list := s.proxy.Skills()
	sk, childURI, digest, found := proxy.SkillFile(list, p.URI)
	if !found {
		return nil, false, nil
	}
	if sk.Held != "" {
		return nil, true, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: sk.Held}
	}
	if !s.skillAllowed(v.sess, sk.Name) {
		return nil, true, skillNotFound(p.URI)
	}
	res, err = s.proxy.ReadResource(ctx, sk.Server, v.sess, &mcp.ReadResourceParams{URI: childURI, InputResponses: p.InputResponses, RequestState: p.RequestState})
	if err != nil {
		return nil, true, router.WireError(err)
	}
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		b := c.Blob
		if b == nil {
			b = []byte(c.Text)
		}
		if sum := sha256.Sum256(b); "sha256:"+hex.EncodeToString(sum[:]) != digest {
			return nil, true, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
				Message: "The skill '" + sk.Name + "' served a file whose digest is not the one it listed and was pinned; the file is not passed on."}
		}
		c.URI = p.URI
	}
	return res, true, nil
}

// fileContents is a skill file as resources/read carries it: text when
// it is UTF-8, else bytes.
func fileContents(uri string, b []byte) *mcp.ReadResourceResult {
	c := &mcp.ResourceContents{URI: uri, MIMEType: skills.FileMIME(uri)}
	if utf8.Valid(b) {
		c.Text = string(b)
	} else {
		c.Blob = b
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}
}

// syncChildSkills keeps the children's skills searchable with the
// library's (search_skills, resolve_workflow, execute_skill) until ctx
// ends: whenever a child's content changes, the skills it serves and
// that are not held replace the last. The SKILL.md of a child whose
// config lets execute_skill run its skills is fetched (and checked
// against its digest), so its steps are known; the others are searched
// by their frontmatter.
func (s *Server) syncChildSkills(ctx context.Context) {
	had := false
	for {
		changed := s.proxy.ContentChanged()
		var remote []*skills.Skill
		for _, c := range s.proxy.Skills() {
			if c.Held != "" {
				continue
			}
			var doc []byte
			if c.Execute {
				doc = s.fetchChildSkill(ctx, c)
			}
			remote = append(remote, skills.RemoteSkill(c.Server, c.Name, c.Entry.URI, c.Entry.Frontmatter, doc, c.Execute && doc != nil))
		}
		if len(remote) > 0 || had {
			// Until a child serves skills the library is left to start
			// after the first handshake, as it does without them.
			s.skillLib.SetRemote(remote)
			had = true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// fetchChildSkill reads a child's SKILL.md, nil unless its bytes are the
// ones its manifest lists.
func (s *Server) fetchChildSkill(ctx context.Context, c proxy.ChildSkill) []byte {
	var digest string
	for _, f := range c.Entry.Resources {
		if f.URI == c.Entry.URI {
			digest = f.Digest
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.Settings.Children.Request)
	defer cancel()
	res, err := s.proxy.ReadResource(ctx, c.Server, nil, &mcp.ReadResourceParams{URI: c.ChildURI})
	if err != nil || len(res.Contents) != 1 || res.Contents[0] == nil {
		s.log.Info("[EVOKORE] Cannot read a child's skill", "server", c.Server, "skill", c.Name)
		return nil
	}
	b := []byte(res.Contents[0].Text)
	if res.Contents[0].Blob != nil {
		b = res.Contents[0].Blob
	}
	if sum := sha256.Sum256(b); "sha256:"+hex.EncodeToString(sum[:]) != digest {
		s.log.Info("[EVOKORE] A child's skill is not what its digest says; it is not run", "server", c.Server, "skill", c.Name)
		return nil
	}
	return b
}

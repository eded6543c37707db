package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/safefile"
	"github.com/evokore/evokore/internal/session"
)

// SubjectEnvFile is the name of a tenant's file of per-subject values,
// under its home (session.TenantHome): a JSON object from subject to an
// object from variable name to value, owner-only, e.g.
//
//	{"alice": {"GITHUB_TOKEN": "ghp_..."}, "bob": {"GITHUB_TOKEN": "ghp_..."}}
//
// The placeholders a server names in subjectEnv resolve, for a caller's
// instance, from that caller's entry and nowhere else.
const SubjectEnvFile = "subject-env.json"

// maxSubjectEnvBytes caps the file: a tenant's secrets, not a database.
const maxSubjectEnvBytes = 1 << 20

// resolveSpec is the child's spec with its placeholders resolved: from
// the router's environment, and for the names in subjectEnv, from the
// instance's caller's entry in its tenant's file (the template, which
// only lists tools and takes no call, gets them empty).
func (c *child) resolveSpec() (config.Server, error) {
	if len(c.spec.SubjectEnv) == 0 {
		return c.spec.Resolve(c.sup.opts.Env)
	}
	own := map[string]string{}
	if c.inst == nil {
		for _, name := range c.spec.SubjectEnv {
			own[name] = ""
		}
	} else {
		var err error
		if own, err = subjectValues(c.sup.opts.Home, c.inst.tenant, c.inst.subject, c.spec); err != nil {
			return config.Server{}, errFatal{err}
		}
	}
	return c.spec.Resolve(c.sup.opts.Env.With(own))
}

// subjectValues are the subjectEnv values of subject in tenant's file:
// every name the server lists, or an error naming the file and what is
// missing. A file others may read is refused, as a secret that may have
// leaked is not used.
func subjectValues(home, tenant, subject string, spec config.Server) (map[string]string, error) {
	path := filepath.Join(session.TenantHome(home, tenant), SubjectEnvFile)
	if subject == "" {
		return nil, fmt.Errorf("server '%s' takes %v from %s by the caller's subject, and this caller has none (an authenticated HTTP caller has one)", spec.ID, spec.SubjectEnv, path)
	}
	o, err := safefile.OpenOwn(path, maxSubjectEnvBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("server '%s' takes %v from %s, which does not exist", spec.ID, spec.SubjectEnv, path)
	}
	if err != nil {
		return nil, fmt.Errorf("server '%s': %s: %w", spec.ID, path, err)
	}
	defer o.Close()
	if fi, err := o.Info(); err != nil || fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("server '%s': %s may be read by other users (chmod 600 it): its values are not used", spec.ID, path)
	}
	data, err := io.ReadAll(o)
	if err != nil {
		return nil, fmt.Errorf("server '%s': %s: %w", spec.ID, path, err)
	}
	var all map[string]map[string]string
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, fmt.Errorf("server '%s': %s is not an object from subject to an object of values: %v", spec.ID, path, err)
	}
	mine, ok := all[subject]
	if !ok {
		return nil, fmt.Errorf("server '%s' takes %v from %s, which has no entry for this caller's subject", spec.ID, spec.SubjectEnv, path)
	}
	out := make(map[string]string, len(spec.SubjectEnv))
	for _, name := range spec.SubjectEnv {
		v, ok := mine[name]
		if !ok {
			return nil, fmt.Errorf("server '%s' takes %s from %s, and this caller's entry has none", spec.ID, name, path)
		}
		out[name] = v
	}
	return out, nil
}

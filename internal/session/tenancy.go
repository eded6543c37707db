package session

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"sync"
)

// The tenancy rule, in one place: a caller sees and acts on the records
// of a session (its memories, workers, replays, trust ledger, approvals)
// only within its own tenant. The tenant is Identity.Tenant: the JWT
// subject over HTTP with tenant scoping, "" for stdio and for HTTP
// without it, so a router without tenants behaves as one tenant.
//
// Records named by a session id the caller chooses (memory_list
// {"session_id": …}) are kept under the tenant's own home, so another
// tenant naming the same id reaches a different, empty place: nothing to
// guess, nothing to leak. Records listed from a shared place carry their
// owner's tenant and are filtered with MaySee.

// MaySee reports whether a caller acting for id may see and act on
// records owned by tenant owner.
func (id Identity) MaySee(owner string) bool { return id.Tenant == owner }

// IdentityOf is who a session acts for; nobody in particular (tenant "")
// for nil.
func IdentityOf(s *Session) Identity {
	if s == nil {
		return Identity{}
	}
	return s.Identity
}

// TenantOf is the tenant a session acts for; "" for none (nil included).
func TenantOf(s *Session) string { return IdentityOf(s).Tenant }

// TenantHome is where tenant's records live under home (EVOKORE_HOME):
// home itself for "" (where every record was before tenants existed),
// home/tenants/<digest of the tenant> otherwise. The digest keeps a
// subject's characters out of the path.
func TenantHome(home, tenant string) string {
	if tenant == "" {
		return home
	}
	sum := sha256.Sum256([]byte(tenant))
	return filepath.Join(home, "tenants", hex.EncodeToString(sum[:16]))
}

// TenantDir is dir, a folder of EVOKORE_HOME (home/<name>), as tenant's:
// TenantHome(home, tenant)/<name>.
func TenantDir(dir, tenant string) string {
	if tenant == "" {
		return dir
	}
	return filepath.Join(TenantHome(filepath.Dir(dir), tenant), filepath.Base(dir))
}

// PerTenant keeps one store per tenant, each in the tenant's TenantDir of
// Dir and made on first use.
type PerTenant[T any] struct {
	// Dir is the store's folder of EVOKORE_HOME (tenant "").
	Dir string
	// New makes the store kept in dir.
	New func(dir string) T

	mu sync.Mutex
	m  map[string]T
}

// For returns tenant's store.
func (p *PerTenant[T]) For(tenant string) T {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.m[tenant]; ok {
		return v
	}
	if p.m == nil {
		p.m = map[string]T{}
	}
	v := p.New(TenantDir(p.Dir, tenant))
	p.m[tenant] = v
	return v
}

// CallerOf is whom a session's calls count against where the router
// limits callers (cooldowns, rate limits, run_code slots): the
// authenticated tenant + subject, so one user's sessions and sessionless
// requests count together whatever protocol era they speak; else the
// session itself (stdio, HTTP without a subject). A sessionless request
// without a subject stands for its role and tenant (its session's id),
// the most such a request says of who sent it. "" for nil.
func CallerOf(s *Session) string {
	switch {
	case s == nil:
		return ""
	case s.Identity.Subject != "":
		return "subject\x00" + s.Identity.Tenant + "\x00" + s.Identity.Subject
	default:
		// A session id holds no NUL, so it never reads as a subject.
		return s.ID
	}
}

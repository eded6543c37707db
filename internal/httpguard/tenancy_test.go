package httpguard_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/evokore/evokore/internal/auth"
	"github.com/evokore/evokore/internal/httpguard"
)

// The owner rule, written once: a caller owns the records of its own
// tenant and no other, the records of no tenant ("") only when it is of
// none itself.
func TestOwnsIsTheTenancyRule(t *testing.T) {
	for _, c := range []struct {
		caller, record string
		owns           bool
	}{
		{"", "", true},
		{"acme", "acme", true},
		{"acme", "", false},
		{"", "acme", false},
		{"acme", "globex", false},
		{"acme", "ACME", false},
		{"acme", "acme ", false},
	} {
		if got := (httpguard.Caller{Tenant: c.caller}).Owns(c.record); got != c.owns {
			t.Errorf("a caller of tenant %q owns a record of tenant %q: %v, want %v", c.caller, c.record, got, c.owns)
		}
	}
}

type subjects map[string]string // bearer token → subject

func (s subjects) Authenticate(r *http.Request) (auth.Principal, error) {
	tok, _ := auth.Bearer(r)
	sub, ok := s[tok]
	if !ok {
		return auth.Principal{}, auth.ErrInvalid
	}
	return auth.Principal{Subject: sub, Role: "admin"}, nil
}

// The caller a handler behind the guard sees is the one Identify made of
// the credential, and only that: with tenants per subject, alice owns
// alice's records and neither bob's nor the tenantless ones; without an
// Identify, every caller is of the tenant "" (a credential names no
// tenant by itself).
func TestTheGuardHandsOnTheIdentifiedTenant(t *testing.T) {
	var got httpguard.Caller
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = httpguard.CallerFrom(r.Context())
		w.WriteHeader(204)
	})
	perSubject := httpguard.New(httpguard.Options{Auth: subjects{"a": "alice"},
		Identify: func(p auth.Principal) httpguard.Caller {
			return httpguard.Caller{Subject: p.Subject, Tenant: p.Subject, Role: p.Role}
		}}).Wrap(h)
	plain := httpguard.New(httpguard.Options{Auth: subjects{"a": "alice"}}).Wrap(h)
	ask := func(g http.Handler) httpguard.Caller {
		got = httpguard.Caller{Tenant: "unset"}
		req := httptest.NewRequest("GET", "http://127.0.0.1/mcp", nil)
		req.Header.Set("Authorization", "Bearer a")
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		if rec.Code != 204 {
			t.Fatalf("the guard refused a good token: %d", rec.Code)
		}
		return got
	}
	alice := ask(perSubject)
	if !alice.Owns("alice") || alice.Owns("bob") || alice.Owns("") {
		t.Errorf("alice with tenants per subject: %+v", alice)
	}
	if c := ask(plain); c.Tenant != "" || !c.Owns("") || c.Owns("alice") {
		t.Errorf("without Identify: %+v, want the tenant \"\"", c)
	}
}

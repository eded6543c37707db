package sessionstore

import (
	"encoding/json"
	"strings"
	"time"
)

// MaxRecordBytes bounds a stored session: a record is a role, a subject
// and a list of tool names, so anything larger was not written by us.
const MaxRecordBytes = 1 << 20

// wire is a Record as the file and Redis stores keep it: EVOKORE-MCP's
// session-store shape, with times as Unix milliseconds.
type wire struct {
	ID          string            `json:"sessionId"`
	Created     int64             `json:"createdAt"`
	LastSeen    int64             `json:"lastAccessedAt"`
	Activations []string          `json:"activatedTools"`
	Role        string            `json:"role,omitempty"`
	Subject     string            `json:"subject,omitempty"`
	Tenant      string            `json:"tenantId,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

func encode(r Record) ([]byte, error) {
	acts := r.Activations
	if acts == nil {
		acts = []string{}
	}
	return json.Marshal(wire{ID: r.ID, Created: r.Created.UnixMilli(), LastSeen: r.LastSeen.UnixMilli(),
		Activations: acts, Role: r.Role, Subject: r.Subject, Tenant: r.Tenant, Metadata: r.Metadata})
}

// decode parses a stored record; anything that is not one of ours for id
// is reported as not found, never as a crash or a half-read session.
func decode(id string, data []byte) (Record, error) {
	if len(data) > MaxRecordBytes {
		return Record{}, ErrNotFound
	}
	var w wire
	if err := json.Unmarshal(data, &w); err != nil || w.ID != id {
		return Record{}, ErrNotFound
	}
	return Record{ID: w.ID, Role: w.Role, Subject: w.Subject, Tenant: w.Tenant,
		Activations: append([]string{}, w.Activations...), Metadata: w.Metadata,
		Created: time.UnixMilli(w.Created), LastSeen: time.UnixMilli(w.LastSeen)}, nil
}

// MaxIDLen bounds a session id; the go-sdk's are far shorter.
const MaxIDLen = 128

// ValidID reports whether id can name a stored session: 1 to MaxIDLen
// characters of letters, digits, '-', '_' and '.', not only dots. Ids
// come from a request header, so anything else (a path separator, a
// Redis glob character, a control byte) is refused rather than rewritten:
// two ids must never share a record.
func ValidID(id string) bool {
	if id == "" || len(id) > MaxIDLen || strings.Trim(id, ".") == "" {
		return false
	}
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

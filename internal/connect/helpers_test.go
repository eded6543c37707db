package connect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// setup is one user's files: a client's file written with text, and
// EVOKORE_HOME with the config an entry serves.
type setup struct {
	t      *testing.T
	client Client
	file   string
	home   string
	config string
	schema func([]byte) error
}

func newSetup(t *testing.T, client, text string) *setup {
	t.Helper()
	c, err := Lookup(client)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	name := "client.json"
	if c.Format == TOML {
		name = "config.toml"
	}
	s := &setup{t: t, client: c, file: filepath.Join(dir, name), home: filepath.Join(dir, "evokore-home")}
	s.config = filepath.Join(s.home, "mcp.config.json")
	if text != "" {
		if err := os.WriteFile(s.file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s *setup) options(imp bool) Options {
	return Options{Client: s.client, File: s.file, Home: s.home, Import: imp, Schema: s.schema,
		Target: Target{Exe: "/opt/evokore/bin/evokore", Config: s.config}}
}

// connect plans connect --import and applies it.
func (s *setup) connect() *Plan {
	s.t.Helper()
	p, err := Connect(s.options(true))
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := p.Apply(time.Now()); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// servers are evokore's config's servers, decoded.
func (s *setup) servers() map[string]map[string]any {
	s.t.Helper()
	var doc struct {
		Servers map[string]map[string]any `json:"servers"`
	}
	b, err := os.ReadFile(s.config)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		s.t.Fatal(err)
	}
	return doc.Servers
}

func (s *setup) read() string {
	s.t.Helper()
	b, err := os.ReadFile(s.file)
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

// refusal is why server name was not imported, "" when it was not
// refused.
func refusal(p *Plan, name string) string {
	for _, r := range p.Refused {
		if r.Name == name {
			return r.Why
		}
	}
	return ""
}

// jsonOf is v as JSON, for comparing decoded values in messages.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// position is file:line:col of the first occurrence of text in the file.
func (s *setup) position(text string) string {
	s.t.Helper()
	data := s.read()
	i := strings.Index(data, text)
	if i < 0 {
		s.t.Fatalf("%q is not in the file", text)
	}
	line, col := lineCol([]byte(data), i)
	return s.file + ":" + itoa(line) + ":" + itoa(col)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

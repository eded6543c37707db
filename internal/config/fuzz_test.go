package config_test

import (
	"bytes"
	"testing"

	"github.com/evokore/evokore/internal/config"
)

// checkDiagnostics holds for any input: every diagnostic is an error placed
// in the file that was parsed, on a line that exists (or 0 for the file).
func checkDiagnostics(t *testing.T, file string, src []byte, ds config.Diagnostics) {
	t.Helper()
	// YAML ends lines with LF, CRLF or a lone CR.
	norm := bytes.ReplaceAll(bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
	lines := bytes.Count(norm, []byte("\n")) + 1
	for _, d := range ds {
		if d.Severity != config.SeverityError {
			t.Errorf("parse diagnostic %v is not an error", d)
		}
		if d.File != file {
			t.Errorf("diagnostic %v names file %q, want %q", d, d.File, file)
		}
		if d.Line < 0 || d.Line > lines || d.Col < 0 {
			t.Errorf("diagnostic %v is outside the %d-line input", d, lines)
		}
		if d.Message == "" || d.Code == "" {
			t.Errorf("diagnostic %#v lacks a message or code", d)
		}
	}
}

func FuzzParseMCPConfig(f *testing.F) {
	f.Add([]byte(`{"servers": {"fs": {"command": "npx", "args": ["-y", "server-filesystem", "./"]}}}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		const file = "fuzz/mcp.config.json"
		cfg, ds := config.ParseMCPConfig(file, src)
		checkDiagnostics(t, file, src, ds)
		if cfg != nil {
			checkDiagnostics(t, file, src, cfg.ServerProblems)
		}
		if len(ds) > 0 {
			if cfg != nil {
				t.Fatalf("got a config and diagnostics %v", ds)
			}
			return
		}
		if cfg == nil {
			t.Fatal("no diagnostics and no config")
		}
		// What callers do next must not panic either.
		env := config.NewEnv(map[string]string{"A": "a"})
		for _, s := range cfg.Servers {
			if s.Transport != config.TransportStdio && s.Transport != config.TransportHTTP && (s.Transport != config.TransportSSE || s.Invalid == "") {
				t.Errorf("server %q: transport %q", s.ID, s.Transport)
			}
			_ = s.Placeholders()
			_, _ = s.Resolve(env)
			_ = s.RateLimit.ServerRate()
			_ = s.RateLimit.ToolRates()
			_ = cfg.Pos("servers", s.ID, "command")
		}
		for _, p := range cfg.Discovery.Profiles {
			switch p.AlwaysVisible.Mode {
			case config.VisibleAll, config.VisibleAllNative, config.VisibleList:
			default:
				t.Errorf("profile %q: visibility mode %q", p.Name, p.AlwaysVisible.Mode)
			}
		}
	})
}

func FuzzParsePermissions(f *testing.F) {
	f.Add([]byte("roles:\n  admin:\n    default_permission: allow\nrules:\n  fs_read_file: allow\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		const file = "fuzz/permissions.yml"
		p, ds := config.ParsePermissions(file, src)
		checkDiagnostics(t, file, src, ds)
		if len(ds) > 0 {
			if p != nil {
				t.Fatalf("got permissions and diagnostics %v", ds)
			}
			return
		}
		if p == nil {
			t.Fatal("no diagnostics and no permissions")
		}
		levels := map[string]bool{config.LevelAllow: true, config.LevelRequireApproval: true, config.LevelDeny: true}
		for tool, level := range p.Rules {
			if !levels[level] {
				t.Errorf("rule %q: level %q", tool, level)
			}
			_ = p.Pos("rules", tool)
		}
		for _, r := range p.Roles {
			if !levels[r.DefaultPermission] {
				t.Errorf("role %q: default_permission %q", r.Name, r.DefaultPermission)
			}
		}
	})
}

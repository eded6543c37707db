package config

import (
	"strings"
	"testing"
)

func TestParsePluginManifest(t *testing.T) {
	src := `{
  "name": "hello",
  "version": "1.0.0",
  "description": "Says hello.",
  "command": "./hello.sh",
  "timeoutMs": 5000,
  "tools": [
    {"name": "hello_world", "description": "Greet someone.",
     "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "additionalProperties": false},
     "annotations": {"readOnlyHint": true}},
    {"name": "hello_slow", "title": "Slow Hello", "description": "Greet slowly.", "command": "sh", "args": ["slow.sh"], "timeoutMs": 100}
  ]
}`
	m, ds := ParsePluginManifest("plugin.json", []byte(src))
	if ds != nil {
		t.Fatal(ds)
	}
	if m.Name != "hello" || m.Version != "1.0.0" || m.String() != "hello 1.0.0" || len(m.Tools) != 2 {
		t.Fatalf("manifest = %+v", m)
	}
	a, b := m.Tools[0], m.Tools[1]
	if a.Command != "./hello.sh" || a.TimeoutMs != 5000 || a.Annotations == nil || a.Annotations.ReadOnlyHint == nil || !*a.Annotations.ReadOnlyHint ||
		!strings.Contains(string(a.InputSchema), `"additionalProperties": false`) {
		t.Errorf("first tool inherits the plugin's command and timeout: %+v", a)
	}
	if b.Command != "sh" || strings.Join(b.Args, " ") != "slow.sh" || b.TimeoutMs != 100 || b.Title != "Slow Hello" || string(b.InputSchema) != `{"type":"object","properties":{}}` {
		t.Errorf("second tool keeps its own: %+v", b)
	}
}

func TestParsePluginManifestErrors(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"syntax", "{\n  \"name\": \"x\",\n  \"version\": \n}", []string{"plugin.json:4:1: error: invalid JSON"}},
		{"missing fields", `{"name": "x"}`, []string{"version", "tools"}},
		{"misspelt key", "{\n  \"name\": \"x\", \"version\": \"1\", \"comand\": \"sh\",\n  \"tools\": [{\"name\": \"t\", \"description\": \"d\", \"command\": \"sh\"}]\n}", []string{"plugin.json:2:", "comand"}},
		{"bad tool name", "{\"name\": \"x\", \"version\": \"1\", \"command\": \"sh\",\n \"tools\": [{\"name\": \"has space\", \"description\": \"d\"}]}", []string{"plugin.json:2:", "tools.0.name"}},
		{"schema not an object", `{"name": "x", "version": "1", "command": "sh", "tools": [{"name": "t", "description": "d", "inputSchema": {"type": "string"}}]}`, []string{"inputSchema.type"}},
		{"no tools", `{"name": "x", "version": "1", "command": "sh", "tools": []}`, []string{"tools"}},
		{"no command", "{\"name\": \"x\", \"version\": \"1\",\n \"tools\": [\n  {\"name\": \"t\", \"description\": \"d\"}]}", []string{"plugin.json:3:3: error: tools.0 (t): no command"}},
		{"duplicate tool", "{\"name\": \"x\", \"version\": \"1\", \"command\": \"sh\", \"tools\": [\n {\"name\": \"t\", \"description\": \"d\"},\n {\"name\": \"t\", \"description\": \"e\"}]}", []string{"plugin.json:3:", `tool name "t" is already used by tools.0`}},
		{"timeout too long", `{"name": "x", "version": "1", "command": "sh", "timeoutMs": 700000, "tools": [{"name": "t", "description": "d"}]}`, []string{"timeoutMs"}},
	}
	for _, c := range cases {
		_, ds := ParsePluginManifest("plugin.json", []byte(c.src))
		if ds == nil {
			t.Errorf("%s: no diagnostics", c.name)
			continue
		}
		got := ds.Error()
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: diagnostics lack %q:\n%s", c.name, w, got)
			}
		}
	}
	if _, err := LoadPluginManifest(t.TempDir() + "/plugin.json"); err == nil || !strings.Contains(err.Error(), "no plugin.json") {
		t.Errorf("missing file = %v", err)
	}
}

package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/evokore/evokore/schema"
)

// PluginManifest is a plugin's plugin.json after validation.
type PluginManifest struct {
	// File is the manifest's path.
	File        string            `json:"-"`
	Name        string            `json:"name"`
	Version     string            `json:"version"`
	Description string            `json:"description,omitempty"`
	Command     string            `json:"command,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	TimeoutMs   int               `json:"timeoutMs,omitempty"`
	Tools       []PluginTool      `json:"tools"`
}

// PluginTool is one tool of a plugin. Command, Args and TimeoutMs are the
// tool's own, or the plugin's when the tool sets none.
type PluginTool struct {
	Name        string             `json:"name"`
	Title       string             `json:"title,omitempty"`
	Description string             `json:"description"`
	InputSchema json.RawMessage    `json:"inputSchema,omitempty"`
	Annotations *PluginAnnotations `json:"annotations,omitempty"`
	Command     string             `json:"command,omitempty"`
	Args        []string           `json:"args,omitempty"`
	TimeoutMs   int                `json:"timeoutMs,omitempty"`
}

// PluginAnnotations are a plugin tool's behaviour hints; nil leaves a hint
// unset.
type PluginAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// LoadPluginManifest reads and validates a plugin.json. Problems come back
// as [Diagnostics] positioned in the file.
func LoadPluginManifest(file string) (*PluginManifest, error) {
	src, err := ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Diagnostics{errAt(Position{File: file}, "read", "no plugin.json")}
	}
	if err != nil {
		return nil, Diagnostics{ReadProblem(file, err)}
	}
	m, ds := ParsePluginManifest(file, src)
	if ds != nil {
		return nil, ds
	}
	return m, nil
}

// ParsePluginManifest validates the bytes of a plugin.json against
// #PluginManifest, then checks what the schema cannot: every tool has a
// command (its own or the plugin's) and tool names are unique.
func ParsePluginManifest(file string, src []byte) (*PluginManifest, Diagnostics) {
	doc, ds := validate(file, src, formatJSON, schema.PluginManifest)
	if ds != nil {
		return nil, ds
	}
	m := &PluginManifest{File: file}
	if err := json.Unmarshal(src, m); err != nil {
		return nil, doc.decodeErr(err)
	}
	if len(m.Tools) == 0 {
		ds = append(ds, errAt(doc.pos.at(file, "tools"), "plugin-tools", "tools: a plugin serves at least one tool"))
	}
	seen := map[string]int{}
	for i := range m.Tools {
		t := &m.Tools[i]
		idx := strconv.Itoa(i)
		if t.Command == "" && m.Command == "" {
			ds = append(ds, errAt(doc.pos.at(file, "tools", idx), "plugin-command",
				"tools.%d (%s): no command: set the plugin's command or the tool's", i, t.Name))
		}
		if j, dup := seen[t.Name]; dup {
			ds = append(ds, errAt(doc.pos.at(file, "tools", idx, "name"), "duplicate-tool",
				"tools.%d: tool name %q is already used by tools.%d", i, t.Name, j))
		}
		seen[t.Name] = i
		if t.Command == "" {
			t.Command, t.Args = m.Command, m.Args
		}
		if t.TimeoutMs == 0 {
			t.TimeoutMs = m.TimeoutMs
		}
		if len(t.InputSchema) == 0 {
			t.InputSchema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
	}
	if ds != nil {
		ds.Sort()
		return nil, ds
	}
	return m, nil
}

// String names the plugin and its version.
func (m *PluginManifest) String() string { return fmt.Sprintf("%s %s", m.Name, m.Version) }

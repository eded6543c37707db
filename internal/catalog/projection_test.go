package catalog

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/config"
)

func settings(mode, profile string) Discovery {
	vars := map[string]string{}
	if mode != "" {
		vars["EVOKORE_TOOL_DISCOVERY_MODE"] = mode
	}
	if profile != "" {
		vars["EVOKORE_DISCOVERY_PROFILE"] = profile
	}
	return ReadSettings(config.NewVars(config.NewEnv(vars))).Discovery
}

func TestResolvePrecedence(t *testing.T) {
	user := []Profile{{Name: "mine", Visibility: VisibleAll}, {Name: "coding", Visibility: VisibleAll, Description: "user's coding"}}
	for _, tc := range []struct {
		name, mode, env, active string
		user                    []Profile
		want, source            string
		warns                   bool
	}{
		{"nothing requested, mode unset", "", "", "", nil, "default", SourceBuiltinDefault, false},
		{"nothing requested, legacy", "legacy", "", "", nil, "default", SourceBuiltinDefault, false},
		{"nothing requested, dynamic", "dynamic", "", "", nil, "default", SourceBuiltinDefault, false},
		{"legacy pins env profile", "legacy", "coding", "", nil, "default", SourceSafetyPin, false},
		{"legacy pins config profile", "legacy", "", "research", nil, "default", SourceSafetyPin, false},
		{"env profile, mode unset", "", "coding", "", nil, "coding", SourceEnv, false},
		{"config profile, dynamic", "dynamic", "", "research", nil, "research", SourceConfig, false},
		{"env beats config", "dynamic", "voice", "research", nil, "voice", SourceEnv, false},
		{"unknown env profile", "", "nope", "", nil, "default", SourceFallback, true},
		{"unknown config profile", "", "", "nope", nil, "default", SourceFallback, true},
		{"user profile", "", "", "mine", user, "mine", SourceConfig, false},
		{"user profile replaces shipped", "", "coding", "", user, "coding", SourceEnv, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Resolve(settings(tc.mode, tc.env), tc.active, tc.user)
			if r.Profile.Name != tc.want || r.Source != tc.source || (r.Warning != "") != tc.warns {
				t.Errorf("got %s via %s (warning %q)", r.Profile.Name, r.Source, r.Warning)
			}
		})
	}
	r := Resolve(settings("", "coding"), "", user)
	if r.Profile.Description != "user's coding" {
		t.Errorf("a user profile named like a shipped one should replace it")
	}
}

func entry(name string, src Source) *Entry {
	return &Entry{Name: name, Source: src, Tool: &mcp.Tool{Name: name}}
}

func TestProfileLists(t *testing.T) {
	native, proxied, describe := entry("search_skills", SourceNative), entry("fs_read_file", SourceProxy), entry(DescribeTool, SourceNative)
	plugin := entry("hello_world", SourcePlugin)
	list := FromConfig(config.Profile{AlwaysVisible: config.Visibility{Mode: config.VisibleList, Names: []string{"fs_read_file"}}},
		func(n string) bool { return n == "search_skills" || n == DescribeTool })
	empty := FromConfig(config.Profile{AlwaysVisible: config.Visibility{Mode: config.VisibleList, Names: []string{}}}, func(string) bool { return false })
	all := Profile{Visibility: VisibleAll}
	natives := Profile{Visibility: VisibleAllNative}
	for _, tc := range []struct {
		p    Profile
		e    *Entry
		want bool
	}{
		{natives, native, true}, {natives, plugin, true}, {natives, proxied, false}, {natives, describe, true},
		{all, proxied, true}, {all, native, true},
		{list, proxied, true}, {list, native, false}, {list, describe, true},
		{empty, native, false}, {empty, proxied, false}, {empty, describe, true},
	} {
		if got := tc.p.Lists(tc.e); got != tc.want {
			t.Errorf("%v lists %s = %v, want %v", tc.p.Visibility, tc.e.Name, got, tc.want)
		}
	}
}

func TestShippedProfilesContent(t *testing.T) {
	byName := map[string]Profile{}
	for _, p := range ShippedProfiles() {
		byName[p.Name] = p
	}
	for _, n := range []string{"default", "coding", "research", "voice", "legacy-full", "legacy-dynamic"} {
		if _, ok := byName[n]; !ok {
			t.Fatalf("shipped profile %s missing", n)
		}
	}
	for _, n := range byName["coding"].Proxied {
		if len(n) > 11 && n[:11] == "elevenlabs_" {
			t.Errorf("coding should have no voice tools: %s", n)
		}
	}
	if len(byName["voice"].Natives)+len(byName["voice"].Proxied) != 20 || len(byName["coding"].Natives)+len(byName["coding"].Proxied) != 44 ||
		len(byName["research"].Natives)+len(byName["research"].Proxied) != 27 {
		t.Error("shipped profile sizes differ from EVOKORE-MCP's")
	}
	if byName["legacy-full"].Visibility != VisibleAll || byName["legacy-dynamic"].Visibility != VisibleAllNative || byName["default"].Visibility != VisibleAllNative {
		t.Error("legacy-full is all; legacy-dynamic and default are all-native")
	}
	if len(byName["coding"].MandatoryInjectionSkills) != 7 {
		t.Error("coding declares the seven mandatory skills")
	}
}

func TestVisibleNeverListsAHeldTool(t *testing.T) {
	held := entry("fs_write_file", SourceProxy)
	held.Quarantine = "held"
	free := entry("fs_read_file", SourceProxy)
	all := &Profile{Visibility: VisibleAll}
	natives := &Profile{Visibility: VisibleAllNative}
	activated := func(string) bool { return true }
	for _, tc := range []struct {
		name      string
		e         *Entry
		p         *Profile
		legacy    bool
		activated func(string) bool
		want      bool
	}{
		{"held, legacy", held, natives, true, nil, false},
		{"held, profile lists all", held, all, false, nil, false},
		{"held, activated", held, natives, false, activated, false},
		{"free, legacy", free, natives, true, nil, true},
		{"free, activated", free, natives, false, activated, true},
		{"free, fresh session", free, natives, false, nil, false},
	} {
		if got := Visible(tc.e, tc.p, tc.legacy, tc.activated); got != tc.want {
			t.Errorf("%s: Visible = %v, want %v", tc.name, got, tc.want)
		}
	}
	snap := NewStore(nil, []string{"fs"})
	snap.SetServerEntries("fs", []*Entry{held, free})
	if got := snap.Snapshot().Project(all, true, nil); len(got) != 1 || got[0] != free {
		t.Errorf("Project = %v", got)
	}
}

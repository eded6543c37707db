package server

import (
	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/native/codemode"
	"github.com/evokore/evokore/internal/policy"
	"github.com/evokore/evokore/internal/proxy"
	"github.com/evokore/evokore/internal/records"
	"github.com/evokore/evokore/internal/tasks"
)

// PartSettings are the settings of the parts the server composes: the
// records', the policy's and the catalog's read by the package that owns
// them, the natives' here (NativeSettings). New reads them from
// Options.Settings.Env; every command reads them once more at start only
// to report bad values (ReadPartSettings), with config's.
type PartSettings struct {
	Records records.Settings
	Policy  policy.Settings
	Catalog catalog.Settings
	Natives NativeSettings
	Tasks   tasks.Settings
	// Instances bound the per-caller instances of children.
	Instances proxy.InstanceSettings
}

// NativeSettings are the switches and bounds of the native tools the server
// registers (registerManagers hands each to its manager).
type NativeSettings struct {
	Telemetry        bool // EVOKORE_TELEMETRY
	SkillWatcher     bool // EVOKORE_SKILL_WATCHER
	HTTPAllowPrivate bool // EVOKORE_HTTP_ALLOW_PRIVATE: fetch_skill may reach private addresses
	// Code are run_code's bounds (EVOKORE_CODE_*).
	Code codemode.Limits
}

// ReadPartSettings reads every part's settings from env, and what the
// readers could not use.
func ReadPartSettings(env config.Env) (PartSettings, []string) {
	v := config.NewVars(env)
	p := PartSettings{
		Policy:  policy.ReadSettings(v),
		Catalog: catalog.ReadSettings(v),
		Natives: NativeSettings{
			Telemetry:        v.Bool("EVOKORE_TELEMETRY"),
			SkillWatcher:     v.Bool("EVOKORE_SKILL_WATCHER"),
			HTTPAllowPrivate: v.Bool("EVOKORE_HTTP_ALLOW_PRIVATE"),
			Code:             codemode.ReadLimits(v),
		},
		Records:   records.ReadSettings(v),
		Tasks:     tasks.ReadSettings(v),
		Instances: proxy.ReadInstanceSettings(v),
	}
	return p, v.Warnings
}

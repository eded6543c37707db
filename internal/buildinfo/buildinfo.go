// Package buildinfo names the build that runs, the same way in every
// evokore command: the version serverInfo, the startup line and
// `evokore version` report.
package buildinfo

import "runtime/debug"

// Version is the build's version: linked when the link set it (-ldflags
// "-X main.version=v1.2.3"; "dev" means unset), else what the Go build
// recorded (Of).
func Version(linked string) string {
	if linked != "dev" {
		return linked
	}
	bi, _ := debug.ReadBuildInfo()
	return Of(bi)
}

// Of names a build by its module version, else by the VCS stamp `go
// build` records in a checkout (revision, and "-dirty" for uncommitted
// changes), so a bug report says which code ran; "dev" only when neither
// is known (go run, -buildvcs=false).
func Of(bi *debug.BuildInfo) string {
	if bi == nil {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "dev-" + rev
	if modified == "true" {
		v += "-dirty"
	}
	return v
}

package buildinfo

import (
	"runtime/debug"
	"testing"
)

// A checkout build names its commit, not "dev".
func TestVersionFromBuildInfo(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}}
	for _, c := range []struct {
		bi   *debug.BuildInfo
		want string
	}{
		{&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "dev-0123456789ab"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, "dev-0123456789ab-dirty"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{nil, "dev"},
	} {
		if got := Of(c.bi); got != c.want {
			t.Errorf("Of(%+v) = %q, want %q", c.bi, got, c.want)
		}
	}
}

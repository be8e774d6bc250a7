package front

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.0"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "8d5855c0123456789abcdef"}, {Key: "vcs.time", Value: "2026-11-23T16:00:00Z"},
		{Key: "vcs.modified", Value: "true"}}}
	if got, want := versionOf(info), "v1.2.0 (commit 8d5855c01234 (modified), committed 2026-11-23T16:00:00Z, go1.26.8)"; got != want {
		t.Errorf("versionOf = %q, want %q", got, want)
	}
	info = &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}
	if got, want := versionOf(info), "dev (commit unknown: built without VCS information (-buildvcs=false, or not from a git checkout), go1.26.8)"; got != want {
		t.Errorf("versionOf = %q, want %q", got, want)
	}
}

// A release build (make dist) has no VCS data in its build info: the
// commit and date come from -ldflags -X.
func TestVersionStamped(t *testing.T) {
	defer func(v, c, d string) { version, commit, date = v, c, d }(version, commit, date)
	version, commit, date = "v1.3.0", "0123456789abcdef0123", "2026-11-26T20:00:00Z"
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}
	if got, want := versionOf(info), "v1.3.0 (commit 0123456789ab, committed 2026-11-26T20:00:00Z, go1.26.8)"; got != want {
		t.Errorf("versionOf = %q, want %q", got, want)
	}
}

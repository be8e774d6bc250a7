// Package testenv decides what a test does when this machine lacks
// something it needs: a tool, a kernel feature, root. Outside CI the test
// is skipped, saying what is missing. Under CI=true, where .ci/run installs
// everything the suites need, the same test fails instead, so that a
// missing tool can never hide a suite behind a skip.
//
// Skips that are part of a test's design (the helper-process entry points
// and the long tests left out of -short) do not go through here; they are
// listed in ARCHITECTURE.md.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether the tests run in CI (CI=true, as .ci/run sets it).
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing skips tb because this machine lacks what the reason says, or
// fails it under CI=true.
func Missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	reason := fmt.Sprintf(format, args...)
	if InCI() {
		tb.Fatalf("%s; CI=true, so this test must run (.ci/run installs what the tests need)", reason)
	}
	tb.Skip("skipped: " + reason)
}

// LookPath returns the path of the program name, or calls Missing, naming
// the package that provides it.
func LookPath(tb testing.TB, name, pkg string) string {
	tb.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Missing(tb, "%s is not installed (%s)", name, pkg)
	}
	return path
}

// Root calls Missing unless the test runs as root.
func Root(tb testing.TB, why string) {
	tb.Helper()
	if os.Geteuid() != 0 {
		Missing(tb, "needs root to %s", why)
	}
}

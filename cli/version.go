package cli

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
)

// version is set at build time with
// -ldflags "-X github.com/queuectl/queuectl/cli.version=v1.2.0"; without it
// the module version from the build info is used (go install …@v1.2.0).
// commit and date are set the same way by `make dist`, which builds with
// -buildvcs=false so that the build info holds nothing of the checkout;
// the build info's VCS data wins where there is some.
var version, commit, date = "", "", ""

// versionText is what `queuectl version` and `--version` print: the
// version, the commit and its date, and the Go toolchain, from the build
// info the Go linker embeds (`go build` in a git checkout records the
// commit; "modified" means uncommitted changes were built).
func versionText() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return orDev(version)
	}
	return versionOf(info)
}

func versionOf(info *debug.BuildInfo) string {
	v := version
	if v == "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	settings := map[string]string{"vcs.revision": commit, "vcs.time": date}
	for _, s := range info.Settings {
		if s.Value != "" {
			settings[s.Key] = s.Value
		}
	}
	var parts []string
	if rev := settings["vcs.revision"]; rev != "" {
		c := "commit " + rev[:min(12, len(rev))]
		if settings["vcs.modified"] == "true" {
			c += " (modified)"
		}
		parts = append(parts, c)
	} else {
		parts = append(parts, "commit unknown: built without VCS information (-buildvcs=false, or not from a git checkout)")
	}
	if t := settings["vcs.time"]; t != "" {
		parts = append(parts, "committed "+t)
	}
	parts = append(parts, info.GoVersion)
	return fmt.Sprintf("%s (%s)", orDev(v), strings.Join(parts, ", "))
}

func orDev(v string) string {
	if v == "" {
		return "dev"
	}
	return v
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:        "version",
		Usage:       "print the version, the commit it was built from and its date",
		Description: "Same as queuectl --version.\n\nExample: queuectl version",
		Action: func(c *cli.Context) error {
			if _, err := args(c, 0, 0); err != nil {
				return err
			}
			_, err := fmt.Fprintf(c.App.Writer, "queuectl version %s\n", versionText())
			return err
		},
	}
}

package cli

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestReorderArgs(t *testing.T) {
	app := newApp(context.Background())
	for _, tc := range []struct{ in, want string }{
		{"wait a --timeout 5m", "wait --timeout 5m a"},
		{"wait --timeout 5m a", "wait --timeout 5m a"},
		{"show a --json", "show --json a"},
		{"enqueue --command 'echo --x' -q", "enqueue --command 'echo --x' -q"},
		{"enqueue - -q", "enqueue -q -"},
		{"list --limit -1", "list --limit -1"},
		{"show -- --json", "show -- --json"},
		{"show a -- -b --json", "show -- a -b --json"},
		{"dlq retry a --all", "dlq retry --all a"},
		{"worker stop --timeout 5 --wait", "worker stop --timeout 5 --wait"},
		{"status --home /h --json", "--home /h status --json"},
		{"--db x config set k --home /h v", "--db x --home /h config set k v"},
		{"config set max-retries -5", "config set -- max-retries -5"},
		{"logs a --nosuch b", "logs --nosuch a b"},
		{"wait a --help", "wait --help"},
		{"nosuch a --json", "nosuch a --json"},
		{"show a --generate-bash-completion", "show a --generate-bash-completion"},
		// --json before the command (a global flag, SPEC §5) goes to the
		// command that runs, its subcommand's when it has one.
		{"--json status", "status --json"},
		{"--home /h --json status", "--home /h status --json"},
		{"--json dlq list --limit 2", "dlq list --json --limit 2"},
		{"--json=false show a", "show --json=false a"},
		{"--json worker start", "worker start --json"},
		{"--json", "--json"},
		{"--json dlq nosuch", "dlq nosuch"},
		{"--json --help", "--help"},
		{"--json status --help", "status --help"},
		{"--json hold a --help", "hold --help"},
		{"--json worker start -h", "worker start -h"},
		{"status --json --help", "status --json --help"},
		{"--json nosuch", "nosuch"},
		{"--json -- status", "--json -- status"},
		// A command typed in place of enqueue's JSON keeps its own flags.
		{"enqueue ls -la", "enqueue -- ls -la"},
		{"enqueue ls -la -q", "enqueue -- ls -la -q"},
		{"enqueue rm -f /tmp/x", "enqueue -- rm -f /tmp/x"},
		{"enqueue -q rm -f /tmp/x", "enqueue -q -- rm -f /tmp/x"},
		{"enqueue '{}' --nosuch", "enqueue --nosuch '{}'"},
		// run's command ends run's flags at its first word: what follows
		// is the command's, as for env, nohup and sudo.
		{"run grep -q root /etc/passwd", "run -- grep -q root /etc/passwd"},
		{"run -q xz --timeout 5 --version", "run -q -- xz --timeout 5 --version"},
		{"run --label x echo --label y", "run --label x -- echo --label y"},
		{"run echo hi", "run -- echo hi"},
		{"run -q -- echo --x", "run -q -- echo --x"},
		{"run --home /h -q ls -l", "--home /h run -q -- ls -l"},
		// A flag typed last without its value stays last, so that it says
		// it needs one: in front of the arguments it took the first of them
		// (cancel ID --queue canceled the jobs of a queue named ID), and
		// the app's took the command's name (list --db listed nothing,
		// with the app's usage and exit 0).
		{"cancel a --queue", "cancel --queue"},
		{"wait a b --timeout", "wait --timeout"},
		{"edit a --priority 3 --queue", "edit --priority 3 --queue"},
		{"show a --json --nosuch", "show --json --nosuch a"},
		{"--json dlq list --newest --limit", "dlq list --json --newest --limit"},
		{"list --db", "--db"},
		{"status --home /h --db", "--home /h --db"},
		{"dlq retry a --db", "--db"},
		{"list --db --home", "--db --home list"},
		{"enqueue '{}' --id", "enqueue --id"},
		{"run -q --queue", "run -q --queue"},
		{"run echo --queue", "run -- echo --queue"},
	} {
		got := reorderArgs(app, append([]string{"queuectl"}, fields(tc.in)...))[1:]
		if want := fields(tc.want); !slices.Equal(got, want) {
			t.Errorf("reorderArgs(%q) = %q, want %q", tc.in, got, want)
		}
	}
}

// fields splits s at spaces, keeping '…' quoted words whole.
func fields(s string) []string {
	var out []string
	for i, part := range strings.Split(s, "'") {
		if i%2 == 1 {
			out = append(out, part)
		} else {
			out = append(out, strings.Fields(part)...)
		}
	}
	return out
}

func TestRepeatedFlag(t *testing.T) {
	app := newApp(context.Background())
	for _, tc := range []struct{ in, want string }{
		{"list --state dead --state canceled", `--state given twice ("dead", then "canceled")`},
		{"list --queue a --json --queue=b", `--queue given twice ("a", then "b")`},
		{"--json list --label x --newest --label y", `--label given twice ("x", then "y")`},
		{"pause --queue a --queue b", `--queue given twice ("a", then "b")`},
		{"cancel --queue a --home /h --queue b", `--queue given twice ("a", then "b")`},
		{"wait --queue a --queue b", `--queue given twice`},
		{"purge --state dead --older-than 1h --state canceled", `--state given twice`},
		{"list --state dead", ""},
		{"list --state dead --state=dead", ""},            // the same twice
		{"list --state dead --state canceled --help", ""}, // the help
		{"list --limit 20 --limit 50", ""},                // a setting: the last wins (an alias's default)
		{"serve --addr :1 --addr :2", ""},
		{"enqueue --queue a --queue b --command true", ""}, // a setting of the job
		{"list --json --json", ""},
		{"enqueue --env A=1 --env B=2 --command true", ""},
		{"worker start --queue a --queue b", ""},
		{"enqueue ls --label x --label y", ""},
		{"run --label a -- sh -c 'x --label b --label c'", ""},
		{"nosuch --state a --state b", ""},
		{"list --state a --state b --generate-bash-completion", ""},
	} {
		err := repeatedFlag(app, append([]string{"queuectl"}, fields(tc.in)...))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("repeatedFlag(%q) = %v, want nil", tc.in, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("repeatedFlag(%q) = %v, want %s", tc.in, err, tc.want)
		}
	}
}

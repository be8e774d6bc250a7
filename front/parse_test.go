package front

import "testing"

// TestParse: the front serves only the plainest forms of enqueue and run;
// everything else is the full program's, which says what it means.
func TestParse(t *testing.T) {
	tests := []struct {
		args  []string
		serve bool
	}{
		{[]string{"enqueue", "--command", "true"}, true},
		{[]string{"enqueue", "-q", "-c", "true"}, true},
		{[]string{"--home", "/h", "--db=/h/q.db", "enqueue", "--command=true", "--queue", "q"}, true},
		{[]string{"enqueue", `{"command": "true"}`}, true},
		{[]string{"enqueue", " {\"command\": \"true\"}", "-q"}, false}, // a flag after the argument
		{[]string{"run", "--", "make", "-j4"}, true},
		{[]string{"run", "-q", "--queue", "heavy", "--", "true"}, true},
		{[]string{"run", "--shell", "true"}, true},
		{[]string{"run", "--label", "cc foo.o", "--", "cc", "-c", "foo.c"}, true},
		{[]string{"run", "--label=x", "-q", "--", "true"}, true},
		{[]string{"run", "--label", "x", "--label", "y", "--", "true"}, false},
		{[]string{"enqueue", "--label", "x", "-c", "true"}, false},
		{[]string{"run", "--label", "bad\x01", "--", "true"}, true}, // refused by job()
		{[]string{"run", "true"}, false},
		{[]string{"run", "--shell", "true", "--", "true"}, false},
		{[]string{"run", "--"}, false},
		{[]string{"run", "--timeout", "1", "--", "true"}, false},
		{[]string{"run", "--", "true", "--generate-bash-completion"}, false},
		{[]string{"enqueue", "--help"}, false},
		{[]string{"enqueue", "-h"}, false},
		{[]string{"--help"}, false},
		{[]string{}, false},
		{[]string{"status"}, false},
		{[]string{"enqueue", "-q", "-q", "-c", "true"}, false},
		{[]string{"enqueue", "--queue", "a", "--queue", "b", "-c", "true"}, false},
		{[]string{"enqueue", "-c", "true", "--json"}, false},
		{[]string{"enqueue", "-c", "true", "--priority", "3"}, false},
		{[]string{"enqueue", "-c", "true", `{"command": "x"}`}, false},
		{[]string{"enqueue", "-"}, false},
		{[]string{"enqueue", "-f", "job.json"}, true},
		{[]string{"enqueue", "-q", "--file=job.json"}, true},
		{[]string{"enqueue", "-f", "job.json", "-c", "true"}, false},
		{[]string{"enqueue", "-f", "job.json", "--queue", "q"}, false},
		{[]string{"enqueue", "-f", "job.json", `{"command": "x"}`}, false},
		{[]string{"enqueue", "echo", "hi"}, false},
		{[]string{"enqueue", `[{"command": "true"}]`}, false},
		{[]string{"enqueue", "--queue", "q", `{"command": "true"}`}, false},
		{[]string{"enqueue", "-c"}, false},
		{[]string{"-home", "/h", "enqueue", "-c", "true"}, false},
		{[]string{"--home"}, false},
		{[]string{"--home", "", "enqueue", "-c", "true"}, false}, // the full program refuses it
		{[]string{"--db=", "run", "--", "true"}, false},
		{[]string{"--version"}, false},
	}
	for _, tt := range tests {
		args := append([]string{"queuectl"}, tt.args...)
		if _, got := parse(args); got != tt.serve {
			t.Errorf("parse(%q) serves = %v, want %v", tt.args, got, tt.serve)
		}
	}
}

// TestRunLabel: the front's run job carries its --label, and a label
// the full program refuses is left to it to say so.
func TestRunLabel(t *testing.T) {
	c, _ := parse([]string{"queuectl", "run", "--label", "cc foo.o", "--", "true"})
	if nj, ok := c.job(); !ok || nj.Label != "cc foo.o" {
		t.Errorf("run --label 'cc foo.o': job label %q (ok %v)", nj.Label, ok)
	}
	c, _ = parse([]string{"queuectl", "run", "--label", "bad\x01", "--", "true"})
	if _, ok := c.job(); ok {
		t.Errorf("run --label with a control character: the front made its job")
	}
}

// TestParseKeepsArgs: what the full program is given is what was typed.
func TestParseKeepsArgs(t *testing.T) {
	args := []string{"queuectl", "enqueue", "-c", "true"}
	c, _ := parse(args)
	if args[2] != "-c" || len(c.args) != 4 || *c.command != "true" {
		t.Errorf("parse(%q) changed its arguments, or read -c as %q", args, *c.command)
	}
}

package cli

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/urfave/cli/v2"
)

func editCommand() *cli.Command {
	return &cli.Command{
		Name:      "edit",
		Usage:     "change a job that has not started: command, priority, queue, run time, env, max retries, label",
		ArgsUsage: "ID",
		Description: `With flags, sets those fields (--env K=V sets one variable, repeatable). With --file,
sets the fields a JSON file gives, as the editor shows them (- reads stdin). With neither,
opens the job's fields as JSON in $VISUAL or $EDITOR (else vi) and applies what was saved;
that needs a terminal on stdin and stdout, and without one edit exits 2: give the change as
flags or --file. A field left out is unchanged.

The editor's buffer has no env, whose values are secret, unless --with-env puts them in; an
"env" field, when there, is the job's whole environment. A saved buffer that is not a valid
job changes nothing and is kept: the error names its file, to fix and give back with --file.
A buffer saved empty aborts the edit: the job is unchanged, and edit exits 0.

Only a pending or held job can be edited; once it runs, exit 4 (an edit never races a claim:
one wins). A job held after a failed attempt has run: exit 4 too. One put back by restart or
dlq retry, its attempts anew, can be.

Example: queuectl edit @last --priority 5 --label urgent`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "command", Aliases: []string{"c"}, Usage: "shell `CMD` to run"},
			&cli.IntFlag{Name: "priority", Usage: "`N`: higher runs first", DefaultText: "unchanged"},
			&cli.StringFlag{Name: "queue", Usage: "queue `NAME`"},
			&cli.StringFlag{Name: "run-at", Usage: "not before `TIME` (RFC 3339)"},
			&cli.StringSliceFlag{Name: "env", Usage: "set `K=V` in the job's environment (repeatable)"},
			&cli.IntFlag{Name: "max-retries", Usage: "`N` runs before the job is dead", DefaultText: "unchanged"},
			&cli.StringFlag{Name: "label", Usage: "free-form `LABEL`"},
			&cli.StringFlag{Name: "file", Usage: "set the fields of the JSON in `PATH`, as the editor shows them (-: stdin)"},
			&cli.BoolFlag{Name: "with-env", Usage: "show the job's env, values and all, in the editor, to edit it there"},
			jsonFlag,
		},
		Action: withHome(func(c *cli.Context, h *home) error {
			id, err := oneID(c, h)
			if err != nil {
				return err
			}
			j, changed, err := editJob(c, h, id)
			if err != nil {
				return err
			}
			switch {
			case c.Bool("json"):
				return printer(c).Job(withReasons(c, h.store, []claim.Job{j})[0], nil)
			case !changed:
				fmt.Fprintf(c.App.Writer, "Job %s unchanged\n", id)
			default:
				fmt.Fprintf(c.App.Writer, "Edited job %s\n", id)
			}
			return nil
		}),
	}
}

// editJob edits job id as the flags, --file or the editor say, and returns
// the job; changed is false when the editor saved the buffer as it was.
func editJob(c *cli.Context, h *home, id string) (j claim.Job, changed bool, err error) {
	e, set, err := editFromFlags(c)
	switch {
	case err != nil:
		return j, false, err
	case set && c.IsSet("file"):
		return j, false, withHint(usagef("--file and change flags: give one or the other"), "queuectl edit "+id+" --file PATH")
	case set:
		j, err = h.store.Edit(c.Context, id, e)
		return j, true, err
	case c.IsSet("file"):
		var data []byte
		if name := c.String("file"); name == "-" {
			data, err = io.ReadAll(c.App.Reader)
		} else {
			data, err = os.ReadFile(name)
		}
		if err != nil {
			err = fmt.Errorf("%w: %v", claim.ErrInvalid, err) // bad input, as a file enqueue cannot read
		} else {
			e, err = parseEdit(data)
		}
		if err != nil {
			return j, false, fmt.Errorf("edit --file: %w; job %s unchanged", err, id)
		}
		if e.Empty() { // {}: every field left out
			j, err = h.store.Get(c.Context, id)
			return j, false, err
		}
		j, err = h.store.Edit(c.Context, id, e)
		return j, true, err
	}
	return editInEditor(c, h, id)
}

// editFromFlags reads edit's flags; set is false when none is given.
func editFromFlags(c *cli.Context) (e claim.Edit, set bool, err error) {
	str := func(name string) *string { return given(c, name, c.String, &set) }
	e.Command, e.Queue, e.Label = str("command"), str("queue"), str("label")
	e.Priority, e.MaxRetries = given(c, "priority", c.Int, &set), given(c, "max-retries", c.Int, &set)
	if s := str("run-at"); s != nil {
		t, err := time.Parse(time.RFC3339, *s)
		if err != nil {
			return e, set, usagef("--run-at %q is not an RFC 3339 time such as 2026-11-21T03:00:00Z", *s)
		}
		e.RunAt = &t
	}
	for _, kv := range c.StringSlice("env") {
		set = true
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return e, set, usagef("--env %q is not K=V", kv)
		}
		if e.Env == nil {
			e.Env = map[string]string{}
		}
		e.Env[k] = v
	}
	return e, set, nil
}

// given is flag name's value, read with get, when the flag was given (and
// then *set is true); nil when it was not.
func given[T any](c *cli.Context, name string, get func(string) T, set *bool) *T {
	if !c.IsSet(name) {
		return nil
	}
	*set = true
	v := get(name)
	return &v
}

// editable is what `edit` opens in the editor: the fields it can change.
// Env is there only with --with-env: its values are secret (SPEC §6).
type editable struct {
	Command    string             `json:"command"`
	Priority   int                `json:"priority"`
	Queue      string             `json:"queue"`
	RunAt      *time.Time         `json:"run_at,omitempty"`
	Env        *map[string]string `json:"env,omitempty"`
	MaxRetries int                `json:"max_retries"`
	Label      string             `json:"label"`
}

// parseEdit reads an edit from the JSON of an editable: a field left out
// (or null) is unchanged, env is the job's whole environment. Errors, all
// ErrInvalid, name the field in the buffer's terms.
func parseEdit(data []byte) (claim.Edit, error) {
	var e claim.Edit
	var fields map[string]json.RawMessage
	if err := claim.DuplicateKey(data); err != nil {
		return e, err // encoding/json keeps the last, which the reader of the first does not expect
	}
	if err := json.Unmarshal(data, &fields); err != nil {
		if syn := (*json.SyntaxError)(nil); errors.As(err, &syn) {
			line := 1 + bytes.Count(data[:min(int(syn.Offset), len(data))], []byte("\n"))
			return e, fmt.Errorf("%w: not JSON at line %d: %v", claim.ErrInvalid, line, syn)
		}
		return e, fmt.Errorf("%w: not a JSON object of the job's fields ({\"command\": …})", claim.ErrInvalid)
	}
	known := []string{"command", "priority", "queue", "run_at", "env", "max_retries", "label"}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(known, k) {
			return e, fmt.Errorf("%w: unknown field %q: the fields are %s", claim.ErrInvalid, k, strings.Join(known, ", "))
		}
	}
	var err error
	var runAt *string
	var env *map[string]string
	for _, f := range []error{
		fieldOf(fields, "command", "a string", &e.Command),
		fieldOf(fields, "priority", "a whole number", &e.Priority),
		fieldOf(fields, "queue", "a string", &e.Queue),
		fieldOf(fields, "run_at", "an RFC 3339 time such as 2026-11-21T03:00:00Z", &runAt),
		fieldOf(fields, "env", `an object of "NAME": "value" strings`, &env),
		fieldOf(fields, "max_retries", "a whole number", &e.MaxRetries),
		fieldOf(fields, "label", "a string", &e.Label),
	} {
		err = cmp.Or(err, f)
	}
	if err != nil {
		return e, err
	}
	if runAt != nil {
		t, err := time.Parse(time.RFC3339, *runAt)
		if err != nil {
			return e, fmt.Errorf("%w: run_at %q must be an RFC 3339 time such as 2026-11-21T03:00:00Z", claim.ErrInvalid, *runAt)
		}
		e.RunAt = &t
	}
	if env != nil {
		e.Env, e.ReplaceEnv = *env, true
	}
	return e, nil
}

// fieldOf decodes the field name of fields into *v, left nil when the
// field is not there or null; the error says the field must be want.
func fieldOf[T any](fields map[string]json.RawMessage, name, want string, v **T) error {
	raw, ok := fields[name]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%w: %s must be %s", claim.ErrInvalid, name, want)
	}
	return nil
}

// editInEditor opens job id's editable fields in the user's editor, on the
// terminal, and applies what was saved. A saved buffer that does not parse,
// or that the job refuses, is kept, and the error names its file.
func editInEditor(c *cli.Context, h *home, id string) (j claim.Job, changed bool, err error) {
	j, err = h.store.Get(c.Context, id)
	if err == nil {
		err = claim.EditableError(j) // said before the editor opens, not after
	}
	if err != nil {
		return j, false, err
	}
	if !isTerminal(c.App.Reader) || !isTerminal(c.App.Writer) {
		// As git commit without -m: an editor on a pipe only garbles it.
		return j, false, withHint(usagef("edit %s without change flags opens an editor, and stdin or stdout is not a terminal", id),
			"give the change as flags: queuectl edit "+id+" --priority N (or --command, --queue, --run-at, --env K=V, --max-retries, --label), or as JSON: --file PATH")
	}
	v := editable{Command: j.Command, Priority: j.Priority, Queue: j.Queue, MaxRetries: j.MaxRetries, Label: j.Label}
	if !j.RunAt.IsZero() {
		v.RunAt = &j.RunAt
	}
	if c.Bool("with-env") {
		env := j.Env
		if env == nil {
			env = map[string]string{} // "env": {}, to fill in
		}
		v.Env = &env
	}
	data, _ := json.MarshalIndent(v, "", "  ")
	data = append(data, '\n')
	dir, err := os.MkdirTemp("", "queuectl-edit-")
	if err != nil {
		return j, false, err
	}
	kept := false
	defer func() {
		if !kept {
			os.RemoveAll(dir)
		}
	}()
	file := filepath.Join(dir, id+".json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return j, false, err
	}
	editor := cmp.Or(os.Getenv("VISUAL"), os.Getenv("EDITOR"), "vi")
	cmd := exec.CommandContext(c.Context, "/bin/sh", "-c", editor+` "$1"`, "sh", file)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.App.Reader, c.App.Writer, c.App.ErrWriter
	if err := cmd.Run(); err != nil {
		return j, false, withHint(fmt.Errorf("editor %s failed (%w); job %s unchanged", editor, err, id),
			"set $VISUAL or $EDITOR to an editor that works, or give the change as flags: queuectl edit "+id+" --priority N")
	}
	saved, err := os.ReadFile(file)
	if err != nil {
		return j, false, err
	}
	if len(bytes.TrimSpace(saved)) == 0 {
		// As git commit: a buffer saved empty aborts.
		fmt.Fprintln(c.App.ErrWriter, "queuectl: edit aborted: the buffer was saved empty")
		return j, false, nil
	}
	if bytes.Equal(saved, data) {
		return j, false, nil // saved as it was, or not saved: nothing to change
	}
	e, err := parseEdit(saved)
	if err == nil {
		j, err = h.store.Edit(c.Context, id, e)
	}
	if errors.Is(err, claim.ErrInvalid) {
		kept = true
		return j, false, withHint(fmt.Errorf("the edited job: %w; job %s unchanged, the edit kept in %s", err, id, file),
			"fix it, then: queuectl edit "+id+" --file "+shellQuote([]string{file}))
	}
	return j, err == nil, err
}

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
		Description: `With flags, sets those fields (--env K=V sets one variable, repeatable). Without, opens
the job's fields as JSON in $VISUAL or $EDITOR (else vi) and applies what was saved. Only a
pending or held job can be edited; once it runs, exit 4 (an edit never races a claim: one wins).

Example: queuectl edit @last --priority 5 --label urgent`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "command", Aliases: []string{"c"}, Usage: "shell `CMD` to run"},
			&cli.IntFlag{Name: "priority", Usage: "`N`: higher runs first"},
			&cli.StringFlag{Name: "queue", Usage: "queue `NAME`"},
			&cli.StringFlag{Name: "run-at", Usage: "not before `TIME` (RFC 3339)"},
			&cli.StringSliceFlag{Name: "env", Usage: "set `K=V` in the job's environment (repeatable)"},
			&cli.IntFlag{Name: "max-retries", Usage: "`N` runs before the job is dead"},
			&cli.StringFlag{Name: "label", Usage: "free-form `LABEL`"},
			jsonFlag,
		},
		Action: withHome(func(c *cli.Context, h *home) error {
			a, err := args(c, 1, 1)
			if err != nil {
				return err
			}
			id, err := h.store.Resolve(c.Context, a[0])
			if err != nil {
				return err
			}
			e, set, err := editFromFlags(c)
			changed := true
			if err == nil && !set {
				e, changed, err = editInEditor(c, h, id)
			}
			if err != nil {
				return err
			}
			var j claim.Job
			if changed {
				j, err = h.store.Edit(c.Context, id, e)
			} else {
				j, err = h.store.Get(c.Context, id)
			}
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

// editFromFlags reads edit's flags; set is false when none is given.
func editFromFlags(c *cli.Context) (e claim.Edit, set bool, err error) {
	str := func(name string) *string {
		if !c.IsSet(name) {
			return nil
		}
		set = true
		v := c.String(name)
		return &v
	}
	num := func(name string) *int {
		if !c.IsSet(name) {
			return nil
		}
		set = true
		v := c.Int(name)
		return &v
	}
	e.Command, e.Queue, e.Label = str("command"), str("queue"), str("label")
	e.Priority, e.MaxRetries = num("priority"), num("max-retries")
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

// editable is what `edit` opens in the editor: the fields it can change.
type editable struct {
	Command    string            `json:"command"`
	Priority   int               `json:"priority"`
	Queue      string            `json:"queue"`
	RunAt      *time.Time        `json:"run_at,omitempty"`
	Env        map[string]string `json:"env"`
	MaxRetries int               `json:"max_retries"`
	Label      string            `json:"label"`
}

// editInEditor opens job id's editable fields in the user's editor and
// returns the edit of what was saved.
func editInEditor(c *cli.Context, h *home, id string) (e claim.Edit, changed bool, err error) {
	j, err := h.store.Get(c.Context, id)
	if err == nil {
		err = claim.EditableError(j) // said before the editor opens, not after
	}
	if err != nil {
		return claim.Edit{}, false, err
	}
	v := editable{Command: j.Command, Priority: j.Priority, Queue: j.Queue, Env: j.Env, MaxRetries: j.MaxRetries, Label: j.Label}
	if !j.RunAt.IsZero() {
		v.RunAt = &j.RunAt
	}
	data, _ := json.MarshalIndent(v, "", "  ")
	dir, err := os.MkdirTemp("", "queuectl-edit-")
	if err != nil {
		return claim.Edit{}, false, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, id+".json")
	if err := os.WriteFile(file, append(data, '\n'), 0o600); err != nil {
		return claim.Edit{}, false, err
	}
	editor := firstNonEmpty(os.Getenv("VISUAL"), os.Getenv("EDITOR"), "vi")
	cmd := exec.CommandContext(c.Context, "/bin/sh", "-c", editor+` "$1"`, "sh", file)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.App.Reader, c.App.ErrWriter, c.App.ErrWriter
	if err := cmd.Run(); err != nil {
		return claim.Edit{}, false, withHint(fmt.Errorf("editor %s: %w; job %s unchanged", editor, err, id), "set $EDITOR, or give flags: queuectl edit ID --priority 5")
	}
	saved, err := os.ReadFile(file)
	if err != nil {
		return claim.Edit{}, false, err
	}
	if bytes.Equal(saved, append(data, '\n')) {
		return claim.Edit{}, false, nil // saved as it was, or not saved: nothing to change
	}
	var out editable
	dec := json.NewDecoder(bytes.NewReader(saved))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return claim.Edit{}, false, fmt.Errorf("%w: the edited job: %v; job %s unchanged", claim.ErrInvalid, err, id)
	}
	e = claim.Edit{Command: &out.Command, Priority: &out.Priority, Queue: &out.Queue, Env: out.Env, ReplaceEnv: true,
		MaxRetries: &out.MaxRetries, Label: &out.Label, RunAt: out.RunAt}
	return e, true, nil
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

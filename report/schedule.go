package report

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// ScheduleObject is the JSON shape of one schedule.
type ScheduleObject struct {
	Name      string `json:"name"`
	Cron      string `json:"cron"`
	TZ        string `json:"tz,omitempty"`
	Paused    bool   `json:"paused"`
	Source    string `json:"source"`
	NextDue   string `json:"next_due,omitempty"`
	LastDue   string `json:"last_due,omitempty"`
	LastJob   string `json:"last_job,omitempty"`
	LastState string `json:"last_state,omitempty"`
	// LastSkipped is the last due time that made no job of its own, and
	// SkipReason why: overlap, missed or refused (claim.SkipOverlap…).
	LastSkipped string `json:"last_skipped,omitempty"`
	SkipReason  string `json:"skip_reason,omitempty"`
	Job         any    `json:"job"`
}

// Schedules renders `schedule list`: a table of name, next due time, cron,
// last job and its state, the last due time that made no job of its own
// with why, command; or one JSON array (`[]` when empty) of {name, cron,
// tz, paused, source ("file" or "cli"), next_due (absent while paused),
// last_due, last_job, last_state, last_skipped, skip_reason, job (the spec
// each run is made from)}.
func (p Printer) Schedules(list []claim.Schedule) error {
	if p.JSON {
		return WriteJSON(p.Out, SchedulesJSON(list))
	}
	rows := make([][]string, len(list))
	for i, sc := range list {
		next := "paused"
		if !sc.Paused {
			next = p.until(sc.NextDue)
		}
		last := none
		if sc.LastJob != "" {
			last = sc.LastJob
		}
		state := none
		if sc.LastState != "" {
			state = p.state(string(sc.LastState))
		}
		cron := sc.Cron
		if sc.TZ != "" {
			cron += " (" + sc.TZ + ")"
		}
		command := none
		if nj, err := claim.ParseSpec([]byte(sc.Spec)); err == nil {
			command = clip(oneLine(nj.Command), 60)
		}
		skipped := none
		if !sc.LastSkipped.IsZero() {
			skipped = sc.LastSkipped.Local().Format("2006-01-02 15:04") + " " + sc.SkipReason
		}
		rows[i] = []string{sc.Name, next, cron, last, state, skipped, command}
	}
	return writeTable(p.Out, []string{"NAME", "NEXT", "CRON", "LAST JOB", "STATE", "LAST SKIPPED", "COMMAND"}, rows)
}

// until says when t comes: "in 5m (16:05)".
func (p Printer) until(t time.Time) string {
	d := t.Sub(p.now()).Round(time.Second)
	at := t.Local().Format("2006-01-02 15:04")
	if d <= 0 {
		return "due (" + at + ")"
	}
	return "in " + shortDuration(d) + " (" + at + ")"
}

func shortDuration(d time.Duration) string {
	if d < time.Minute {
		return d.String()
	}
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
}

// SchedulesJSON is the JSON shape of `schedule list`; never nil.
func SchedulesJSON(list []claim.Schedule) []ScheduleObject {
	out := make([]ScheduleObject, len(list))
	for i, sc := range list {
		o := ScheduleObject{Name: sc.Name, Cron: sc.Cron, TZ: sc.TZ, Paused: sc.Paused, Source: "cli",
			LastJob: sc.LastJob, LastState: string(sc.LastState), Job: hideEnv(sc.Spec)}
		if sc.File {
			o.Source = "file"
		}
		if !sc.Paused {
			o.NextDue = stamp(sc.NextDue)
		}
		if !sc.LastDue.IsZero() {
			o.LastDue = stamp(sc.LastDue)
		}
		if !sc.LastSkipped.IsZero() {
			o.LastSkipped, o.SkipReason = stamp(sc.LastSkipped), sc.SkipReason
		}
		out[i] = o
	}
	return out
}

// Until says when t comes, as `schedule list` does: "in 5m (2026-11-21 16:05)".
func (p Printer) Until(t time.Time) string { return p.until(t) }

// hideEnv returns a job spec with its env's names only ("env_names"), as
// every view shows a job's environment: its values are secrets.
func hideEnv(spec string) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(spec), &m); err != nil || m["env"] == nil {
		return json.RawMessage(spec)
	}
	var env map[string]string
	if err := json.Unmarshal(m["env"], &env); err != nil {
		return json.RawMessage(spec)
	}
	delete(m, "env")
	names, _ := json.Marshal(envNames(env))
	m["env_names"] = names
	b, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(spec)
	}
	return b
}

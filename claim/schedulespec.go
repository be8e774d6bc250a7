package claim

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/queuectl/queuectl/claim/jobs"
	"io"
	"maps"
	"time"
)

// NewSchedule is a schedule as asked for.
type NewSchedule struct {
	Name string
	Cron string
	TZ   string
	Job  NewJob // the template: no id, unique_key, run_at or delay
	File bool
}

// Validate checks a schedule the way ParseSchedule does.
func (ns *NewSchedule) Validate() error {
	if !ValidID(ns.Name) || len(ns.Name) > 64 {
		return invalidf("schedule name %q is not valid: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", ns.Name)
	}
	if _, err := ParseCron(ns.Cron, ns.TZ); err != nil {
		return err
	}
	nj := ns.Job
	switch {
	case nj.ID != "":
		return invalidf("a schedule's job has no id: each run gets its own")
	case nj.UniqueKey != "":
		return invalidf("a schedule's job has no unique_key: each run has %q", ScheduleKey(ns.Name))
	case !nj.RunAt.IsZero() || nj.Delay != 0:
		return invalidf("a schedule's job has no run_at or delay: the cron expression says when it runs")
	case len(nj.After) > 0:
		return invalidf("a schedule's job has no after: each run is a new job, and the ids it would wait for are long gone")
	case nj.Redrive:
		return invalidf(`a schedule's job has no "dead" object`)
	}
	return nj.Validate()
}

// scheduleFile is a schedules/NAME.json file: a job spec plus cron and tz.
type scheduleFile struct {
	Cron *string `json:"cron"`
	TZ   *string `json:"tz"`
}

// ParseScheduleFile decodes schedules/<name>.json: a job spec with "cron"
// (required) and "tz". It does no I/O. Errors wrap ErrInvalid.
func ParseScheduleFile(name string, data []byte) (NewSchedule, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		return NewSchedule{}, jobs.SpecError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return NewSchedule{}, invalidf("schedule file has data after its closing brace; give exactly one JSON object")
	}
	var sf scheduleFile
	for key, dst := range map[string]**string{"cron": &sf.Cron, "tz": &sf.TZ} {
		if raw, ok := fields[key]; ok {
			var v string
			if err := json.Unmarshal(raw, &v); err != nil {
				return NewSchedule{}, invalidf("field %q must be a JSON string", key)
			}
			*dst = &v
			delete(fields, key)
		}
	}
	if sf.Cron == nil {
		return NewSchedule{}, invalidf(`missing "cron": give when it runs, e.g. {"cron": "0 3 * * *", "command": "make backup"}`)
	}
	rest, _ := json.Marshal(fields)
	// ParseSpec refuses duplicate keys and unknown fields of the job.
	if err := DuplicateKey(data); err != nil {
		return NewSchedule{}, err
	}
	nj, err := ParseSpec(rest)
	if err != nil {
		return NewSchedule{}, err
	}
	ns := NewSchedule{Name: name, Cron: *sf.Cron, Job: nj, File: true}
	if sf.TZ != nil {
		ns.TZ = *sf.TZ
	}
	return ns, ns.Validate()
}

// scheduledJob is the job schedule sc makes for its due time due.
func scheduledJob(sc Schedule, due time.Time) (NewJob, error) {
	nj, err := ParseSpec([]byte(sc.Spec))
	if err != nil {
		return NewJob{}, fmt.Errorf("stored spec: %w", err)
	}
	var b [2]byte
	rand.Read(b[:])
	nj.ID = sc.Name + "-" + due.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
	nj.UniqueKey = ScheduleKey(sc.Name)
	// The job learns which due time it stands for: a backup can be named
	// by the night it belongs to, not by when it happened to run.
	env := make(map[string]string, len(nj.Env)+2)
	maps.Copy(env, nj.Env)
	env["QUEUECTL_SCHEDULE"] = sc.Name
	env["QUEUECTL_DUE"] = due.UTC().Format(time.RFC3339)
	nj.Env = env
	return nj, nil
}

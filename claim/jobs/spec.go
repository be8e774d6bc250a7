package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/queuectl/queuectl/internal/suggest"
)

// DefaultQueue is the queue of a job that names none.
const DefaultQueue = "default"

// NewJob is a job as asked for, before it is stored. Nil pointers and zero
// values take the defaults of the store's Config at enqueue time.
type NewJob struct {
	ID          string // empty: generated
	Command     string
	MaxRetries  *int
	BackoffBase *int
	Priority    int
	Queue       string // empty: DefaultQueue
	RunAt       time.Time
	Delay       time.Duration
	Timeout     *time.Duration
	Env         map[string]string
	Cwd         string
	// Umask is the file mode creation mask the job's shell runs with; nil:
	// the worker's own. Only `run` sets it (to its caller's): a job spec
	// has no such field, as a spool file or a schedule has no shell whose
	// umask it could carry.
	Umask     *int
	UniqueKey string
	Label     string   // free-form, for people and `list --label`
	After     []string // ids of jobs that must complete first
	Hooks     Hooks
	Limits    Limits

	// IngestKey names the spool file this job came from, so that a file seen
	// again after a crash between commit and unlink makes no second job.
	IngestKey string
	// IngestAgain says that the file was found taken already (an ingester
	// that died left it, or a commit failed): its job may have been
	// committed, run and removed since, which the store then remembers
	// (gone_ingests). A file taken now has a key no job ever had. Only an
	// ingester sets it: it never crosses the worker's socket.
	IngestAgain bool `json:"-"`
	// Redrive is set for a dead/ file dropped back into the spool: if the id
	// names a dead job, that job is re-driven like `dlq retry`.
	Redrive bool
}

// spec is the JSON job spec of SPEC §3, as written by users.
type spec struct {
	ID          *string           `json:"id"`
	Command     *string           `json:"command"`
	MaxRetries  *int              `json:"max_retries"`
	BackoffBase *int              `json:"backoff_base"`
	Priority    *int              `json:"priority"`
	Queue       *string           `json:"queue"`
	RunAt       *string           `json:"run_at"`
	Delay       json.RawMessage   `json:"delay"`
	Timeout     json.RawMessage   `json:"timeout"`
	Env         map[string]string `json:"env"`
	Cwd         *string           `json:"cwd"`
	UniqueKey   *string           `json:"unique_key"`
	Label       *string           `json:"label"`
	After       []string          `json:"after"`
	OnSuccess   *string           `json:"on_success"`
	OnFailure   *string           `json:"on_failure"`
	OnDead      *string           `json:"on_dead"`
	Limits      json.RawMessage   `json:"limits"`
	Dead        json.RawMessage   `json:"dead"`
}

// ParseSpec decodes one JSON job spec. It does no I/O. Every error wraps
// ErrInvalid and says what is wrong and how to fix it. A "dead" object (from a
// dead/ file) is accepted, ignored, and reported through NewJob.Redrive.
func ParseSpec(data []byte) (NewJob, error) {
	// A UTF-8 byte order mark, which some editors write, is no part of
	// the JSON: every door (enqueue, -f, stdin, the spool) drops it.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		return NewJob{}, invalidf("job spec is not valid UTF-8 text")
	}
	if s, ok := scanSpec(data); ok {
		return s.newJob()
	}
	s, err := decodeSpec(data)
	if err != nil {
		return NewJob{}, err
	}
	return s.newJob()
}

// decodeSpec decodes any job spec, in two passes (DuplicateKey, then
// encoding/json), with the errors ParseSpec returns.
func decodeSpec(data []byte) (spec, error) {
	if err := DuplicateKey(data); err != nil {
		return spec{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s spec
	if err := dec.Decode(&s); err != nil {
		return spec{}, SpecError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return spec{}, invalidf("job spec has data after its closing brace; give exactly one JSON object")
	}
	return s, nil
}

// DuplicateKey refuses a key given twice in one JSON object: encoding/json
// keeps the last, so {"command": "true", "command": "rm -rf ~"} would run
// what a reader of the first line does not expect. Malformed JSON is left
// for the decoder to report.
func DuplicateKey(data []byte) error {
	type frame struct {
		object, wantKey bool
		keys            map[string]bool
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		top := len(stack) - 1
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, wantKey: true, keys: map[string]bool{}})
			continue
		case json.Delim('['):
			stack = append(stack, frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:top]
			if len(stack) == 0 {
				return nil
			}
			valueDone()
			continue
		}
		if top >= 0 && stack[top].object && stack[top].wantKey {
			key := tok.(string)
			if stack[top].keys[key] {
				return invalidf("duplicate key %q at byte %d: give each field once", key, keyStart(data, dec.InputOffset()))
			}
			stack[top].keys[key], stack[top].wantKey = true, false
			continue
		}
		valueDone()
	}
}

// keyStart finds where the JSON string that ends just before end begins.
func keyStart(data []byte, end int64) int64 {
	for i := end - 2; i >= 0; i-- {
		if data[i] != '"' {
			continue
		}
		backslashes := 0
		for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return i
		}
	}
	return 0
}

// SpecError says what is wrong with a job spec encoding/json refused, as
// an ErrInvalid error.
func SpecError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF):
		return invalidf("job spec is empty; give a JSON object such as {\"command\": \"echo hi\"}")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalidf("job spec is truncated: the JSON object is not closed")
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return invalidf("job spec must be a JSON object, not a JSON %s", typeErr.Value)
		}
		if typeErr.Field == "env" && typeErr.Type.Kind() == reflect.String {
			// The map is right; one of its values is not.
			return invalidf(`the values in "env" must be JSON strings, not a JSON %s`, typeErr.Value)
		}
		return invalidf("field %q must be %s, not a JSON %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return invalidf("job spec is not valid JSON at byte %d: %v", syntaxErr.Offset, err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.TrimPrefix(err.Error(), "json: unknown field ")
		known := slices.DeleteFunc(SpecFields(), func(f string) bool { return f == "dead" })
		if name, err := strconv.Unquote(field); err == nil {
			if near := suggest.Nearest(name, known); near != "" {
				field += fmt.Sprintf(" (did you mean %q?)", near)
			}
		}
		return invalidf("unknown field %s; known fields: %s", field, strings.Join(known, ", "))
	}
	return invalidf("job spec: %v", err)
}

// SpecFields returns the names of the fields a job spec may have, in the
// order of SPEC §3, "dead" (of a dead/ file) last: what ParseSpec accepts,
// and what the job file format's documentation must describe.
func SpecFields() []string {
	t := reflect.TypeFor[spec]()
	fields := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		fields = append(fields, t.Field(i).Tag.Get("json"))
	}
	return fields
}

// jsonKind names the JSON a Go field type takes, for error messages.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a JSON string"
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Map:
		return "a JSON object of strings"
	case reflect.Slice:
		return "a JSON array of job ids"
	}
	return "a JSON " + t.String()
}

func (s *spec) newJob() (NewJob, error) {
	if s.Command == nil {
		return NewJob{}, invalidf(`missing "command": give the shell command to run, e.g. {"command": "make backup"}`)
	}
	if strings.TrimSpace(*s.Command) == "" {
		return NewJob{}, invalidf(`empty "command": give the shell command to run, e.g. {"command": "make backup"}`)
	}
	nj := NewJob{
		Command:     *s.Command,
		MaxRetries:  s.MaxRetries,
		BackoffBase: s.BackoffBase,
		Env:         UnescapeEnv(s.Env), // a name or value that is not UTF-8 (SpecJSON, dead/ files)
		Redrive:     len(s.Dead) > 0 && string(s.Dead) != "null",
	}
	if s.ID != nil {
		nj.ID = *s.ID
	}
	if s.Priority != nil {
		nj.Priority = *s.Priority
	}
	if s.Queue != nil {
		if *s.Queue == "" { // not the default queue, which a spec names by leaving "queue" out
			return NewJob{}, invalidf(`queue "" is not valid: %s; leave "queue" out for the default queue`, NameRule)
		}
		nj.Queue = *s.Queue
	}
	if s.Cwd != nil {
		nj.Cwd = *s.Cwd
	}
	if s.Label != nil {
		nj.Label = *s.Label
	}
	if s.UniqueKey != nil {
		nj.UniqueKey = *s.UniqueKey
	}
	nj.After = s.After
	for _, h := range []struct {
		from *string
		to   *string
	}{{s.OnSuccess, &nj.Hooks.OnSuccess}, {s.OnFailure, &nj.Hooks.OnFailure}, {s.OnDead, &nj.Hooks.OnDead}} {
		if h.from != nil {
			*h.to = *h.from
		}
	}
	limits, err := parseLimits(s.Limits)
	if err != nil {
		return NewJob{}, err
	}
	nj.Limits = limits
	if s.RunAt != nil {
		t, err := time.Parse(time.RFC3339, *s.RunAt)
		if err != nil {
			return NewJob{}, invalidf("run_at %q is not an RFC 3339 time such as 2026-11-21T03:00:00Z", *s.RunAt)
		}
		nj.RunAt = t
	}
	if nj.Delay, err = specDuration("delay", s.Delay); err != nil {
		return NewJob{}, err
	}
	if len(s.Timeout) > 0 && string(s.Timeout) != "null" {
		d, err := specDuration("timeout", s.Timeout)
		if err != nil {
			return NewJob{}, err
		}
		nj.Timeout = &d
	}
	return nj, nj.Validate()
}

// specDuration reads a Go duration string ("90s") or integer seconds (90).
func specDuration(field string, raw json.RawMessage) (time.Duration, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var text string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return 0, invalidf("%s: %v", field, err)
		}
	} else {
		text = string(raw)
	}
	d, err := DurationValue(text)
	if err != nil {
		return 0, invalidf("%s: %v", field, err)
	}
	return d, nil
}

// ParseDuration reads a Go duration ("1m30s") or a count of whole seconds
// ("90"). Negative durations and durations over 100 years are refused with
// an ErrInvalid error.
func ParseDuration(s string) (time.Duration, error) {
	d, err := DurationValue(s)
	if err != nil {
		return 0, invalidf("%v", err)
	}
	return d, nil
}

// DurationValue is ParseDuration with errors that callers prefix themselves.
func DurationValue(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 || n > int64(MaxDuration/time.Second) {
			return 0, fmt.Errorf("%q is out of range; give whole seconds from 0 to %d", s, int64(MaxDuration/time.Second))
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration; write e.g. 90s, 5m, 1h30m, or whole seconds", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is negative; give a duration of 0 or more", s)
	}
	if d > MaxDuration {
		return 0, fmt.Errorf("%q is over 100 years; give a shorter duration", s)
	}
	return d, nil
}

// ParseBatch decodes what `enqueue -` reads: one JSON object (which may span
// lines), or JSON lines, one job spec per line. Blank lines are skipped.
// Errors name the line.
func ParseBatch(data []byte) ([]NewJob, error) {
	if nj, err := ParseSpec(data); err == nil {
		return []NewJob{nj}, nil
	} else if bytes.Count(bytes.TrimSpace(data), []byte("\n")) == 0 {
		return nil, err
	}
	var out []NewJob
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		nj, err := ParseSpec(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out = append(out, nj)
	}
	if len(out) == 0 {
		return nil, invalidf("no job spec given; give a JSON object, or one per line")
	}
	return out, nil
}

// SpecJSON writes nj as a job spec that ParseSpec reads back to nj (for the
// fields a schedule's template may have).
func (nj NewJob) SpecJSON() string {
	m := map[string]any{"command": nj.Command}
	if nj.MaxRetries != nil {
		m["max_retries"] = *nj.MaxRetries
	}
	if nj.BackoffBase != nil {
		m["backoff_base"] = *nj.BackoffBase
	}
	if nj.Priority != 0 {
		m["priority"] = nj.Priority
	}
	if nj.Queue != "" {
		m["queue"] = nj.Queue
	}
	if nj.Timeout != nil {
		m["timeout"] = nj.Timeout.String()
	}
	if len(nj.Env) > 0 {
		m["env"] = EscapeEnv(nj.Env)
	}
	if nj.Cwd != "" {
		m["cwd"] = nj.Cwd
	}
	if nj.Label != "" {
		m["label"] = nj.Label
	}
	for k, v := range map[string]string{"on_success": nj.Hooks.OnSuccess, "on_failure": nj.Hooks.OnFailure, "on_dead": nj.Hooks.OnDead} {
		if v != "" {
			m[k] = v
		}
	}
	if !nj.Limits.IsZero() {
		m["limits"] = nj.Limits
	}
	b, _ := json.Marshal(m)
	return string(b)
}

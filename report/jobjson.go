package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/queuectl/queuectl/internal/jsonstr"
)

// appendJobObject appends o as an element of the array WriteJSON writes
// (indented by two spaces, inside `[`), byte for byte, without the
// reflection of encoding/json: `list --json` of a million jobs spent most
// of its time there. A job with limits, a nested object of its own
// marshaller, goes through encoding/json, which never costs a list much.
func appendJobObject(b []byte, o *JobObject) ([]byte, error) {
	if o.Limits != nil {
		return appendIndented(b, o)
	}
	w := jsonObject{b: b}
	w.job(o)
	return append(w.b, "\n  }"...), nil
}

// appendDeadJobObject is appendJobObject for `dlq list`'s array.
func appendDeadJobObject(b []byte, o *DeadJobObject) ([]byte, error) {
	if o.Limits != nil {
		return appendIndented(b, o)
	}
	w := jsonObject{b: b}
	w.job(&o.JobObject)
	w.optStr("last_stderr_line", o.LastStderr)
	return append(w.b, "\n  }"...), nil
}

// job appends the fields of o, in the order of its struct.
func (w *jsonObject) job(o *JobObject) {
	w.str("id", o.ID)
	w.str("command", o.Command)
	w.str("state", string(o.State))
	w.optStr("pending_reason", o.PendingReason)
	w.int("attempts", o.Attempts)
	w.int("max_retries", o.MaxRetries)
	w.int("backoff_base", o.BackoffBase)
	w.int("priority", o.Priority)
	w.str("queue", o.Queue)
	w.int("run_count", o.RunCount)
	if o.Lost != 0 {
		w.int("lost", o.Lost)
	}
	w.optStr("run_at", o.RunAt)
	w.optStr("run_after", o.RunAfter)
	w.optStr("next_retry_at", o.NextRetryAt)
	w.optStr("timeout", o.Timeout)
	if len(o.EnvNames) > 0 {
		w.strings("env_names", o.EnvNames)
	}
	if len(o.Env) > 0 {
		w.env(o.Env)
	}
	w.optStr("cwd", o.Cwd)
	w.optStr("umask", o.Umask)
	w.optStr("unique_key", o.UniqueKey)
	w.optStr("label", o.Label)
	w.optStr("worker", o.Worker)
	w.optStr("lease_until", o.LeaseUntil)
	w.optStr("last_error", o.LastError)
	if o.ExitCode != nil {
		w.int("exit_code", *o.ExitCode)
	}
	w.str("created_at", o.CreatedAt)
	w.str("updated_at", o.UpdatedAt)
	w.optStr("finished_at", o.FinishedAt)
	if len(o.WaitingOn) > 0 {
		w.strings("waiting_on", o.WaitingOn)
	}
	if len(o.After) > 0 {
		w.strings("after", o.After)
	}
	w.optStr("dead_by", o.DeadBy)
	w.optStr("on_success", o.OnSuccess)
	w.optStr("on_failure", o.OnFailure)
	w.optStr("on_dead", o.OnDead)
	w.optStr("cancel_requested_at", o.CancelAt)
}

// appendIndented appends o as encoding/json writes it in WriteJSON's array.
// It encodes a copy, so that the caller's o stays on the stack.
func appendIndented[T any](b []byte, o *T) ([]byte, error) {
	v := *o
	var obj bytes.Buffer
	enc := json.NewEncoder(&obj)
	enc.SetIndent("  ", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&v); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(obj.Bytes(), []byte("\n"))...), nil
}

// jsonObject appends the fields of one object of a JSON array, at the
// depth and in the spelling of WriteJSON.
type jsonObject struct {
	b      []byte
	fields int
}

func (w *jsonObject) key(k string) {
	if w.fields == 0 {
		w.b = append(w.b, "{\n    \""...)
	} else {
		w.b = append(w.b, ",\n    \""...)
	}
	w.fields++
	w.b = append(append(w.b, k...), "\": "...)
}

func (w *jsonObject) str(k, v string) {
	w.key(k)
	w.b = appendJSONString(w.b, v)
}

// optStr is an `omitempty` string.
func (w *jsonObject) optStr(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

func (w *jsonObject) int(k string, v int) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, int64(v), 10)
}

// env is a map of strings, its keys sorted as encoding/json sorts them.
func (w *jsonObject) env(m map[string]string) {
	w.key("env")
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.b = append(w.b, '{')
	for i, k := range keys {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = append(w.b, "\n      "...)
		w.b = append(appendJSONString(w.b, k), ": "...)
		w.b = appendJSONString(w.b, m[k])
	}
	w.b = append(w.b, "\n    }"...)
}

func (w *jsonObject) strings(k string, vs []string) {
	w.key(k)
	w.b = append(w.b, '[')
	for i, v := range vs {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = append(w.b, "\n      "...)
		w.b = appendJSONString(w.b, v)
	}
	w.b = append(w.b, "\n    ]"...)
}

// appendJSONString appends s quoted as encoding/json quotes a string with
// HTML escaping off.
func appendJSONString(b []byte, s string) []byte { return jsonstr.Append(b, s, false) }

package wire

import (
	"slices"
	"strconv"

	"github.com/queuectl/queuectl/claim/jobs"
	"github.com/queuectl/queuectl/internal/jsonstr"
)

// AppendRequest appends req as encoding/json writes it, byte for byte,
// and a newline. A client writes one request per process, and
// encoding/json's first use of a type (reflecting over its fields, for the
// request, the job, its hooks and limits) cost more than the rest of an
// enqueue's own work; TestAppendRequest and FuzzAppendRequest hold it to
// json.Marshal's bytes. The worker reads the request with encoding/json.
func AppendRequest(b []byte, req Request) ([]byte, error) {
	b = append(b, `{"Fingerprint":`...)
	b = appendString(b, req.Fingerprint)
	b = append(b, `,"DB":`...)
	b = appendString(b, req.DB)
	b = append(b, `,"Job":`...)
	b, err := appendNewJob(b, req.Job)
	if err != nil {
		return nil, err
	}
	if req.Follow {
		b = append(b, `,"Follow":true`...)
	}
	if len(req.Environ) > 0 {
		b = append(b, `,"Environ":`...)
		b = appendMap(b, jobs.EscapeEnv(req.Environ))
	}
	return append(b, '}', '\n'), nil
}

func appendNewJob(b []byte, nj jobs.NewJob) ([]byte, error) {
	b = append(b, `{"ID":`...)
	b = appendString(b, nj.ID)
	b = append(b, `,"Command":`...)
	b = appendString(b, nj.Command)
	b = append(b, `,"MaxRetries":`...)
	b = appendIntPtr(b, nj.MaxRetries)
	b = append(b, `,"BackoffBase":`...)
	b = appendIntPtr(b, nj.BackoffBase)
	b = append(b, `,"Priority":`...)
	b = strconv.AppendInt(b, int64(nj.Priority), 10)
	b = append(b, `,"Queue":`...)
	b = appendString(b, nj.Queue)
	b = append(b, `,"RunAt":`...)
	t, err := nj.RunAt.MarshalJSON()
	if err != nil {
		return nil, err
	}
	b = append(b, t...)
	b = append(b, `,"Delay":`...)
	b = strconv.AppendInt(b, int64(nj.Delay), 10)
	b = append(b, `,"Timeout":`...)
	if nj.Timeout == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*nj.Timeout), 10)
	}
	b = append(b, `,"Env":`...)
	b = appendMap(b, jobs.EscapeEnv(nj.Env))
	b = append(b, `,"Cwd":`...)
	b = appendString(b, nj.Cwd)
	b = append(b, `,"Umask":`...)
	b = appendIntPtr(b, nj.Umask)
	b = append(b, `,"UniqueKey":`...)
	b = appendString(b, nj.UniqueKey)
	b = append(b, `,"Label":`...)
	b = appendString(b, nj.Label)
	b = append(b, `,"After":`...)
	if nj.After == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, id := range nj.After {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, id)
		}
		b = append(b, ']')
	}
	b = append(b, `,"Hooks":{`...)
	sep := ""
	for _, h := range [...]struct{ key, cmd string }{
		{`"on_success":`, nj.Hooks.OnSuccess}, {`"on_failure":`, nj.Hooks.OnFailure}, {`"on_dead":`, nj.Hooks.OnDead}} {
		if h.cmd != "" {
			b = append(append(b, sep...), h.key...)
			b = appendString(b, h.cmd)
			sep = ","
		}
	}
	b = append(b, `},"Limits":`...)
	if nj.Limits.IsZero() {
		b = append(b, "{}"...)
	} else {
		l, err := nj.Limits.MarshalJSON() // encoding/json's own bytes
		if err != nil {
			return nil, err
		}
		b = append(b, l...)
	}
	b = append(b, `,"IngestKey":`...)
	b = appendString(b, nj.IngestKey)
	b = append(b, `,"Redrive":`...)
	b = strconv.AppendBool(b, nj.Redrive)
	return append(b, '}'), nil
}

func appendIntPtr(b []byte, p *int) []byte {
	if p == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, int64(*p), 10)
}

// appendMap writes m as encoding/json does: null for nil, keys sorted.
func appendMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, m[k])
	}
	return append(b, '}')
}

// appendString writes s as json.Marshal does (with its HTML escaping).
func appendString(b []byte, s string) []byte { return jsonstr.Append(b, s, true) }

package jobs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Hooks are shell commands a worker runs after a job's events: OnSuccess
// after it completed, OnFailure after each failed run, OnDead after it died.
// Empty: none (the config's default, if any, applies).
type Hooks struct {
	OnSuccess string `json:"on_success,omitempty"`
	OnFailure string `json:"on_failure,omitempty"`
	OnDead    string `json:"on_dead,omitempty"`
}

// Or returns h with each empty hook taken from def.
func (h Hooks) Or(def Hooks) Hooks {
	if h.OnSuccess == "" {
		h.OnSuccess = def.OnSuccess
	}
	if h.OnFailure == "" {
		h.OnFailure = def.OnFailure
	}
	if h.OnDead == "" {
		h.OnDead = def.OnDead
	}
	return h
}

// Limits are resource limits set on a job's processes before its command
// starts. Zero fields are unlimited (the config's default, if any, applies).
type Limits struct {
	Memory int64         // bytes: cgroup memory.max, else RLIMIT_AS
	CPU    time.Duration // CPU time: RLIMIT_CPU, whole seconds
	NoFile int64         // open files: RLIMIT_NOFILE
	NProc  int64         // processes of the user: RLIMIT_NPROC
	FSize  int64         // bytes a file may grow to: RLIMIT_FSIZE
}

// IsZero reports whether no limit is set.
func (l Limits) IsZero() bool { return l == Limits{} }

// Or returns l with each unset limit taken from def.
func (l Limits) Or(def Limits) Limits {
	if l.Memory == 0 {
		l.Memory = def.Memory
	}
	if l.CPU == 0 {
		l.CPU = def.CPU
	}
	if l.NoFile == 0 {
		l.NoFile = def.NoFile
	}
	if l.NProc == 0 {
		l.NProc = def.NProc
	}
	if l.FSize == 0 {
		l.FSize = def.FSize
	}
	return l
}

// limitsSpec is the "limits" object of a job spec.
type limitsSpec struct {
	Memory json.RawMessage `json:"memory"`
	CPU    json.RawMessage `json:"cpu"`
	NoFile *int64          `json:"nofile"`
	NProc  *int64          `json:"nproc"`
	FSize  json.RawMessage `json:"fsize"`
}

// parseLimits reads a spec's "limits" object.
func parseLimits(raw json.RawMessage) (Limits, error) {
	var l Limits
	if len(raw) == 0 || string(raw) == "null" {
		return l, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var s limitsSpec
	if err := dec.Decode(&s); err != nil {
		return l, invalidf(`"limits" must be an object of memory, cpu, nofile, nproc, fsize, e.g. {"memory": "512M", "cpu": "10m", "nofile": 1024}: %v`, err)
	}
	var err error
	if l.Memory, err = specSize("limits.memory", s.Memory); err != nil {
		return l, err
	}
	if l.FSize, err = specSize("limits.fsize", s.FSize); err != nil {
		return l, err
	}
	if l.CPU, err = specDuration("limits.cpu", s.CPU); err != nil {
		return l, err
	}
	if s.NoFile != nil {
		l.NoFile = *s.NoFile
	}
	if s.NProc != nil {
		l.NProc = *s.NProc
	}
	return l, l.validate()
}

func (l Limits) validate() error {
	switch {
	case l.Memory < 0 || l.FSize < 0 || l.NoFile < 0 || l.NProc < 0:
		return invalidf("a limit is negative; give 0 (none) or more")
	case l.CPU > 0 && l.CPU < time.Second:
		return invalidf("limits.cpu %v is under a second; CPU time is limited in whole seconds", l.CPU)
	case l.Memory > 0 && l.Memory < 1<<20:
		return invalidf("limits.memory %s is under 1M; no shell starts in that", FormatSize(l.Memory))
	case l.NoFile > 0 && l.NoFile < 8:
		return invalidf("limits.nofile %d is under 8; a shell needs a few descriptors to start", l.NoFile)
	}
	return nil
}

// specSize reads a size as a string ("512M") or a number of bytes.
func specSize(field string, raw json.RawMessage) (int64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	text := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return 0, invalidf("%s: %v", field, err)
		}
	}
	n, err := ParseSize(text)
	if err != nil {
		return 0, invalidf("%s: %v", field, err)
	}
	return n, nil
}

// ParseSize reads a byte count: a whole number with an optional suffix K,
// M, G or T (powers of 1024; "KB", "KiB" and lower case mean the same).
func ParseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	shift := 0
	if i := len(t) - 1; i > 0 {
		if p := strings.IndexByte("KMGT", t[i]); p >= 0 {
			shift, t = 10*(p+1), t[:i]
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("%q is not a size; write e.g. 512M, 2G or a number of bytes", s)
	}
	return n << shift, nil
}

// FormatSize writes n bytes in the largest unit that divides it: 512M.
func FormatSize(n int64) string {
	for i := 4; i > 0; i-- {
		if unit := int64(1) << (10 * i); n >= unit && n%unit == 0 {
			return strconv.FormatInt(n/unit, 10) + string("KMGT"[i-1])
		}
	}
	return strconv.FormatInt(n, 10)
}

// String writes the limits that are set, as a job spec's keys: memory=512M cpu=10m0s.
func (l Limits) String() string {
	var parts []string
	if l.Memory > 0 {
		parts = append(parts, "memory="+FormatSize(l.Memory))
	}
	if l.CPU > 0 {
		parts = append(parts, "cpu="+l.CPU.String())
	}
	if l.NoFile > 0 {
		parts = append(parts, fmt.Sprintf("nofile=%d", l.NoFile))
	}
	if l.NProc > 0 {
		parts = append(parts, fmt.Sprintf("nproc=%d", l.NProc))
	}
	if l.FSize > 0 {
		parts = append(parts, "fsize="+FormatSize(l.FSize))
	}
	return strings.Join(parts, " ")
}

// MarshalJSON writes the limits as a job spec writes them.
func (l Limits) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	if l.Memory > 0 {
		m["memory"] = FormatSize(l.Memory)
	}
	if l.CPU > 0 {
		m["cpu"] = l.CPU.String()
	}
	if l.NoFile > 0 {
		m["nofile"] = l.NoFile
	}
	if l.NProc > 0 {
		m["nproc"] = l.NProc
	}
	if l.FSize > 0 {
		m["fsize"] = FormatSize(l.FSize)
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads what MarshalJSON wrote (or any spec's "limits").
func (l *Limits) UnmarshalJSON(data []byte) error {
	v, err := parseLimits(data)
	if err != nil {
		return err
	}
	*l = v
	return nil
}

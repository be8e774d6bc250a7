package claim

import (
	"context"
	"errors"
	"fmt"
	"github.com/queuectl/queuectl/claim/jobs"
	"strconv"
	"strings"
	"time"
)

// Config is the tunable behaviour of a home, persisted in the database.
type Config struct {
	MaxRetries        int
	BackoffBase       int
	MaxBackoff        time.Duration
	JobTimeout        time.Duration // 0: none
	Lease             time.Duration
	HeartbeatInterval time.Duration
	PollInterval      time.Duration
	StopTimeout       time.Duration
	SpoolRescan       time.Duration
	Hooks             Hooks         // defaults for jobs that set none
	HookTimeout       time.Duration // bounds each hook run
	Limits            Limits        // defaults for jobs that set none
	LogRetention      time.Duration // 0: log files are kept until their job is purged
	EnvRetention      time.Duration // 0: a finished job's env is kept until it is purged
}

// ConfigKey describes one key of `config list`.
type ConfigKey struct {
	Name    string
	Default string
	Help    string
	set     func(c *Config, v string) error
	get     func(c *Config) string
}

// ConfigKeys lists the keys in the order `config list` shows them.
var ConfigKeys = []ConfigKey{
	{"max-retries", "3", "runs before a job is dead", intKey(1, MaxRetriesMost, func(c *Config) *int { return &c.MaxRetries }), func(c *Config) string { return strconv.Itoa(c.MaxRetries) }},
	{"backoff-base", "2", "seconds; a job waits backoff-base^n after its n-th failed run", intKey(1, 3600, func(c *Config) *int { return &c.BackoffBase }), func(c *Config) string { return strconv.Itoa(c.BackoffBase) }},
	{"max-backoff", "1h", "longest wait between runs", durKey(time.Second, func(c *Config) *time.Duration { return &c.MaxBackoff }), func(c *Config) string { return shortDuration(c.MaxBackoff) }},
	{"job-timeout", "0", "default timeout of a job; 0 means none", durKey(0, func(c *Config) *time.Duration { return &c.JobTimeout }), func(c *Config) string { return shortDuration(c.JobTimeout) }},
	{"lease", "30s", "a claimed job is recovered when its worker stops renewing it this long", durKey(time.Second, func(c *Config) *time.Duration { return &c.Lease }), func(c *Config) string { return shortDuration(c.Lease) }},
	{"heartbeat-interval", "5s", "how often a worker renews its leases", durKey(100*time.Millisecond, func(c *Config) *time.Duration { return &c.HeartbeatInterval }), func(c *Config) string { return shortDuration(c.HeartbeatInterval) }},
	{"poll-interval", "1s", "fallback poll of an idle worker; wake-ups are event-driven", durKey(10*time.Millisecond, func(c *Config) *time.Duration { return &c.PollInterval }), func(c *Config) string { return shortDuration(c.PollInterval) }},
	{"stop-timeout", "30s", "grace between TERM and KILL of a job's processes: a worker's second signal, cancel, a --timeout", durKey(0, func(c *Config) *time.Duration { return &c.StopTimeout }), func(c *Config) string { return shortDuration(c.StopTimeout) }},
	{"spool-rescan", "5s", "how often the spool is rescanned besides fsnotify events", durKey(100*time.Millisecond, func(c *Config) *time.Duration { return &c.SpoolRescan }), func(c *Config) string { return shortDuration(c.SpoolRescan) }},
	{"on-success", "", "shell command run after a job completes, for jobs without on_success", strKey(func(c *Config) *string { return &c.Hooks.OnSuccess }), func(c *Config) string { return c.Hooks.OnSuccess }},
	{"on-failure", "", "shell command run after each failed run, for jobs without on_failure", strKey(func(c *Config) *string { return &c.Hooks.OnFailure }), func(c *Config) string { return c.Hooks.OnFailure }},
	{"on-dead", "", "shell command run after a job dies, for jobs without on_dead", strKey(func(c *Config) *string { return &c.Hooks.OnDead }), func(c *Config) string { return c.Hooks.OnDead }},
	{"hook-timeout", "30s", "a hook still running after this is killed", durKey(time.Second, func(c *Config) *time.Duration { return &c.HookTimeout }), func(c *Config) string { return shortDuration(c.HookTimeout) }},
	{"log-retention", "0", "log files of runs that ended longer ago are removed (the store keeps their last 64 KiB); 0 means kept", durKey(0, func(c *Config) *time.Duration { return &c.LogRetention }), func(c *Config) string { return shortDuration(c.LogRetention) }},
	{"env-retention", "0", "the env values of jobs completed or canceled longer ago are dropped from the store (a restart then runs without them); 0 means kept", durKey(0, func(c *Config) *time.Duration { return &c.EnvRetention }), func(c *Config) string { return shortDuration(c.EnvRetention) }},
	{"limit-memory", "0", "memory limit of a job's processes (512M, 2G); 0 means none", sizeKey(func(c *Config) *int64 { return &c.Limits.Memory }), func(c *Config) string { return FormatSize(c.Limits.Memory) }},
	{"limit-cpu", "0", "CPU time limit of each process of a job (each counts its own); 0 means none", durKey(0, func(c *Config) *time.Duration { return &c.Limits.CPU }), func(c *Config) string { return shortDuration(c.Limits.CPU) }},
	{"limit-nofile", "0", "open files a job's process may hold; 0 means none", int64Key(func(c *Config) *int64 { return &c.Limits.NoFile }), func(c *Config) string { return strconv.FormatInt(c.Limits.NoFile, 10) }},
	{"limit-nproc", "0", "processes the job's user may have; 0 means none", int64Key(func(c *Config) *int64 { return &c.Limits.NProc }), func(c *Config) string { return strconv.FormatInt(c.Limits.NProc, 10) }},
	{"limit-fsize", "0", "largest file a job may write (1G); 0 means none", sizeKey(func(c *Config) *int64 { return &c.Limits.FSize }), func(c *Config) string { return FormatSize(c.Limits.FSize) }},
}

// configAliases maps other spellings to a key, with the unit a bare number
// means in that spelling.
var configAliases = map[string]struct {
	key  string
	unit time.Duration
}{
	"stale-threshold":      {"lease", time.Second},
	"lock-timeout-seconds": {"lease", time.Second},
	"worker-poll-interval": {"poll-interval", time.Second},
	"poll-interval-ms":     {"poll-interval", time.Millisecond},
	"job-timeout-seconds":  {"job-timeout", time.Second},
	"stop-timeout-seconds": {"stop-timeout", time.Second},
}

// DefaultConfig returns the configuration of a new home.
func DefaultConfig() Config {
	var c Config
	for _, k := range ConfigKeys {
		if err := k.set(&c, k.Default); err != nil {
			panic("bad default for " + k.Name)
		}
	}
	return c
}

// LookupConfigKey resolves a key name or alias, `_` and `-` alike. unit is
// what a bare number means under that name (zero for integer keys).
func LookupConfigKey(name string) (key ConfigKey, unit time.Duration, err error) {
	name = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "_", "-")
	if a, ok := configAliases[name]; ok {
		name, unit = a.key, a.unit
	}
	for _, k := range ConfigKeys {
		if k.Name == name {
			return k, unit, nil
		}
	}
	return ConfigKey{}, 0, invalidf("unknown config key %q; keys: %s", name, configKeyNames())
}

func configKeyNames() string {
	names := make([]string, len(ConfigKeys))
	for i, k := range ConfigKeys {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}

// normalize checks value for key and returns its canonical text.
func normalize(key ConfigKey, unit time.Duration, value string) (string, error) {
	value = strings.TrimSpace(value)
	if n, err := strconv.ParseInt(value, 10, 64); err == nil && unit > 0 {
		if n < 0 || n > int64(jobs.MaxDuration/unit) {
			return "", invalidf("%s: %q is out of range; keys: %s", key.Name, value, configKeyNames())
		}
		value = (time.Duration(n) * unit).String()
	}
	c := DefaultConfig()
	if err := key.set(&c, value); err != nil {
		return "", invalidf("%s: %v; keys: %s", key.Name, err, configKeyNames())
	}
	return key.get(&c), nil
}

// Config reads the configuration: defaults, overlaid by what was set.
func (s *Store) Config(ctx context.Context) (Config, error) {
	stored, err := s.engine.ConfigValues(ctx)
	if err != nil {
		return DefaultConfig(), fmt.Errorf("read config: %w", err)
	}
	return configOf(stored), nil
}

// configOf is the configuration with the stored values over the defaults.
func configOf(stored map[string]string) Config {
	c := DefaultConfig()
	for name, value := range stored {
		if k, _, err := LookupConfigKey(name); err == nil {
			// A value this binary cannot read keeps the default.
			_ = k.set(&c, value)
		}
	}
	return c
}

// Check reports settings that cannot work together, with the reason and
// the fix. Its errors wrap ErrInvalid.
func (c Config) Check() error {
	if c.Lease < 2*c.HeartbeatInterval {
		return invalidf("lease %v is shorter than two heartbeat intervals (heartbeat-interval %v): "+
			"a running job's lease would lapse between renewals and the job be killed; "+
			"set lease to at least %v, or heartbeat-interval to at most %v",
			c.Lease, c.HeartbeatInterval, 2*c.HeartbeatInterval, c.Lease/2)
	}
	return nil
}

// SetConfig validates and stores one value. It returns the canonical key
// name and value. Errors wrap ErrInvalid and list the keys.
func (s *Store) SetConfig(ctx context.Context, name, value string) (string, string, error) {
	key, unit, err := LookupConfigKey(name)
	if err != nil {
		return "", "", err
	}
	canon, err := normalize(key, unit, value)
	if err != nil {
		return "", "", err
	}
	// Checked by the engine in the transaction that writes, so that two
	// settings made at once cannot together make a combination that fails.
	err = s.engine.SetConfig(ctx, key.Name, canon, func(stored map[string]string) error {
		c := configOf(stored)
		if err := key.set(&c, canon); err != nil {
			return err
		}
		return c.Check()
	})
	if errors.Is(err, ErrInvalid) {
		return "", "", err
	}
	if err != nil {
		return "", "", fmt.Errorf("set config: %w", err)
	}
	return key.Name, canon, nil
}

// Changed lists the keys whose values differ between c and from, in
// ConfigKeys order.
func (c Config) Changed(from Config) []string {
	var out []string
	for _, k := range ConfigKeys {
		if k.get(&c) != k.get(&from) {
			out = append(out, k.Name)
		}
	}
	return out
}

// ConfigValue is one key of the effective configuration.
type ConfigValue struct {
	Key, Value, Default, Help string
}

// ConfigValues returns every key with its effective value, in ConfigKeys order.
func (s *Store) ConfigValues(ctx context.Context) ([]ConfigValue, error) {
	c, err := s.Config(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ConfigValue, len(ConfigKeys))
	for i, k := range ConfigKeys {
		out[i] = ConfigValue{Key: k.Name, Value: k.get(&c), Default: k.Default, Help: k.Help}
	}
	return out, nil
}

func intKey(lo, hi int, field func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("%q is not a whole number from %d to %d", v, lo, hi)
		}
		*field(c) = n
		return nil
	}
}

func strKey(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		if strings.ContainsRune(v, 0) {
			return fmt.Errorf("a command must not contain a NUL byte")
		}
		*field(c) = strings.TrimSpace(v)
		return nil
	}
}

func sizeKey(field func(*Config) *int64) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := ParseSize(v)
		if err != nil {
			return err
		}
		if n > 0 && n < 1<<20 {
			return fmt.Errorf("%q is under 1M; give 0 (none) or more", v)
		}
		*field(c) = n
		return nil
	}
}

func int64Key(field func(*Config) *int64) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%q is not a whole number of 0 or more", v)
		}
		*field(c) = n
		return nil
	}
}

func durKey(min time.Duration, field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := jobs.DurationValue(v)
		if err != nil {
			return err
		}
		if d < min {
			return fmt.Errorf("%q is below the minimum of %v", v, min)
		}
		*field(c) = d
		return nil
	}
}

// shortDuration prints a duration setting as the defaults are written and
// people write it: 1h, 1h30m, 1m30s, 0; not 1h0m0s.
func shortDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

package claim_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
)

var wantDefaults = claim.Config{
	MaxRetries:        3,
	BackoffBase:       2,
	MaxBackoff:        time.Hour,
	JobTimeout:        0,
	Lease:             30 * time.Second,
	HeartbeatInterval: 5 * time.Second,
	PollInterval:      time.Second,
	StopTimeout:       30 * time.Second,
	SpoolRescan:       5 * time.Second,
	HookTimeout:       30 * time.Second,
}

const keyList = "max-retries, backoff-base, max-backoff, job-timeout, lease, heartbeat-interval, poll-interval, stop-timeout, spool-rescan, on-success, on-failure, on-dead, hook-timeout, log-retention, env-retention, limit-memory, limit-cpu, limit-nofile, limit-nproc, limit-fsize"

func TestConfigDefaults(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		if got := claim.DefaultConfig(); got != wantDefaults {
			t.Errorf("DefaultConfig() = %+v, want %+v", got, wantDefaults)
		}
		s := db.open(t)
		if got, err := s.Config(t.Context()); got != wantDefaults || err != nil {
			t.Errorf("Config() of a new store = %+v, %v; want %+v", got, err, wantDefaults)
		}
		vs, err := s.ConfigValues(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, v := range vs {
			names = append(names, v.Key)
			if v.Help == "" || v.Default == "" && !strings.HasPrefix(v.Key, "on-") { // hooks default to none
				t.Errorf("config key %s has no help or default: %+v", v.Key, v)
			}
			d1, err1 := claim.ParseDuration(v.Value)
			d2, err2 := claim.ParseDuration(v.Default)
			if v.Value != v.Default && (err1 != nil || err2 != nil || d1 != d2) {
				t.Errorf("config key %s: value %q of a new store is not its default %q", v.Key, v.Value, v.Default)
			}
		}
		if got := strings.Join(names, ", "); got != keyList {
			t.Errorf("ConfigValues keys = %s, want %s", got, keyList)
		}
	})
}

func TestSetConfig(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		tests := []struct {
			name, value        string
			wantKey, wantValue string
		}{
			{"max-retries", "5", "max-retries", "5"},
			{"max_retries", " 6 ", "max-retries", "6"},
			{"MAX-RETRIES", "7", "max-retries", "7"},
			{"backoff-base", "3", "backoff-base", "3"},
			{"max-backoff", "2h", "max-backoff", "2h"},
			{"max-backoff", "600", "max-backoff", "10m"},
			{"job-timeout", "0", "job-timeout", "0"},
			{"job_timeout", "1m30s", "job-timeout", "1m30s"},
			{"lease", "45", "lease", "45s"},
			{"lease", "2m", "lease", "2m"},
			{"stale-threshold", "60", "lease", "1m"},
			{"stale_threshold", "90s", "lease", "1m30s"},
			{"lock-timeout-seconds", "10", "lease", "10s"},
			{"heartbeat-interval", "500ms", "heartbeat-interval", "500ms"},
			{"poll-interval", "2", "poll-interval", "2s"},
			{"poll-interval-ms", "250", "poll-interval", "250ms"},
			{"poll_interval_ms", "1000", "poll-interval", "1s"},
			{"worker-poll-interval", "3", "poll-interval", "3s"},
			{"job_timeout_seconds", "30", "job-timeout", "30s"},
			{"job-timeout-seconds", "0", "job-timeout", "0"},
			{"stop-timeout-seconds", "5", "stop-timeout", "5s"},
			{"spool-rescan", "1s", "spool-rescan", "1s"},
			{"on_dead", " notify-send dead ", "on-dead", "notify-send dead"},
			{"on-success", "", "on-success", ""},
			{"hook-timeout", "5", "hook-timeout", "5s"},
			{"limit-memory", "512m", "limit-memory", "512M"},
			{"limit-memory", "1073741824", "limit-memory", "1G"},
			{"limit-memory", "0", "limit-memory", "0"},
			{"limit-cpu", "10m", "limit-cpu", "10m"},
			{"limit-nofile", "1024", "limit-nofile", "1024"},
			{"limit-fsize", "2GiB", "limit-fsize", "2G"},
			{"log-retention", "168h", "log-retention", "168h"},
			{"env_retention", "24h", "env-retention", "24h"},
		}
		for _, tt := range tests {
			t.Run(tt.name+"="+tt.value, func(t *testing.T) {
				ctx := t.Context()
				s := db.open(t)
				key, value, err := s.SetConfig(ctx, tt.name, tt.value)
				if key != tt.wantKey || value != tt.wantValue || err != nil {
					t.Fatalf("SetConfig(%q, %q) = %q, %q, %v; want %q, %q, nil", tt.name, tt.value, key, value, err, tt.wantKey, tt.wantValue)
				}
				vs, _ := s.ConfigValues(ctx)
				for _, v := range vs {
					if v.Key == tt.wantKey && v.Value != tt.wantValue {
						t.Errorf("after SetConfig(%q, %q), ConfigValues says %s = %q, want %q", tt.name, tt.value, v.Key, v.Value, tt.wantValue)
					}
				}
			})
		}
	})
}

func TestSetConfigReadBack(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s := db.open(t)
		for _, kv := range [][2]string{
			{"max-retries", "4"}, {"backoff-base", "10"}, {"max-backoff", "5m"}, {"job-timeout-seconds", "30"},
			{"stale-threshold", "60"}, {"heartbeat-interval", "2s"}, {"poll-interval-ms", "250"},
			{"stop-timeout", "1m"}, {"spool-rescan", "10s"}, {"on-dead", "mail -s dead me"}, {"hook-timeout", "5s"},
			{"limit-memory", "512M"}, {"limit-nofile", "64"},
			{"max-retries", "5"}, // the last set wins
		} {
			if _, _, err := s.SetConfig(ctx, kv[0], kv[1]); err != nil {
				t.Fatalf("SetConfig(%q, %q) = %v", kv[0], kv[1], err)
			}
		}
		want := claim.Config{MaxRetries: 5, BackoffBase: 10, MaxBackoff: 5 * time.Minute, JobTimeout: 30 * time.Second,
			Lease: time.Minute, HeartbeatInterval: 2 * time.Second, PollInterval: 250 * time.Millisecond,
			StopTimeout: time.Minute, SpoolRescan: 10 * time.Second, Hooks: claim.Hooks{OnDead: "mail -s dead me"},
			HookTimeout: 5 * time.Second, Limits: claim.Limits{Memory: 512 << 20, NoFile: 64}}
		// Read back through another Store: the config is in the database.
		other := db.open(t)
		if got, err := other.Config(ctx); got != want || err != nil {
			t.Errorf("Config() = %+v, %v; want %+v", got, err, want)
		}
	})
}

func TestSetConfigErrors(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		tests := []struct {
			name, value string
			want        string // what the message must say besides the key list
		}{
			{"nope", "1", `unknown config key "nope"`},
			{"", "1", "unknown config key"},
			{"max retries", "1", "unknown config key"},
			{"max-retries", "0", `"0" is not a whole number from 1 to 1000`},
			{"max-retries", "abc", "not a whole number"},
			{"max-retries", "3.5", "not a whole number"},
			{"backoff-base", "3601", "from 1 to 3600"},
			{"max-backoff", "500ms", "below the minimum of 1s"},
			{"lease", "-1s", "negative"},
			{"lease", "soon", "not a duration"},
			{"lease", "", "not a duration"},
			{"poll-interval-ms", "-5", "out of range"},
			{"poll-interval-ms", "5", "below the minimum of 10ms"},
			{"stale-threshold", "99999999999999", "out of range"},
			{"job-timeout", "876001h", "over 100 years"},
			{"heartbeat-interval", "1ms", "below the minimum"},
			{"hook-timeout", "0", "below the minimum of 1s"},
			{"limit-memory", "lots", "not a size"},
			{"limit-memory", "100K", "under 1M"},
			{"limit-nofile", "-1", "not a whole number"},
			{"on-dead", "a\x00b", "NUL"},
		}
		for _, tt := range tests {
			t.Run(tt.name+"="+tt.value, func(t *testing.T) {
				s := db.open(t)
				key, value, err := s.SetConfig(t.Context(), tt.name, tt.value)
				if !errors.Is(err, claim.ErrInvalid) {
					t.Fatalf("SetConfig(%q, %q) = %q, %q, %v; want ErrInvalid", tt.name, tt.value, key, value, err)
				}
				for _, w := range []string{tt.want, keyList} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("SetConfig(%q, %q) = %q, want a message containing %q", tt.name, tt.value, err, w)
					}
				}
				if got, _ := s.Config(t.Context()); got != wantDefaults {
					t.Errorf("a refused SetConfig changed the config: %+v", got)
				}
			})
		}
	})
}

func TestLookupConfigKey(t *testing.T) {
	tests := []struct {
		name     string
		wantKey  string
		wantUnit time.Duration
	}{
		{"lease", "lease", 0},
		{" Lease ", "lease", 0},
		{"stale-threshold", "lease", time.Second},
		{"poll-interval-ms", "poll-interval", time.Millisecond},
		{"POLL_INTERVAL_MS", "poll-interval", time.Millisecond},
		{"max_retries", "max-retries", 0},
	}
	for _, tt := range tests {
		k, unit, err := claim.LookupConfigKey(tt.name)
		if k.Name != tt.wantKey || unit != tt.wantUnit || err != nil {
			t.Errorf("LookupConfigKey(%q) = %q, %v, %v; want %q, %v, nil", tt.name, k.Name, unit, err, tt.wantKey, tt.wantUnit)
		}
	}
}

// Settings that cannot work together are refused with the reason, whichever
// of them is set last; each makes sense on its own.
func TestSetConfigRefusesLeaseShorterThanTwoHeartbeats(t *testing.T) {
	forEachEngine(t, func(t *testing.T, db testDB) {
		ctx := t.Context()
		s := db.open(t)
		for _, kv := range [][2]string{{"lease", "1s"}, {"heartbeat-interval", "20s"}, {"stale-threshold", "9"}} {
			_, _, err := s.SetConfig(ctx, kv[0], kv[1])
			if !errors.Is(err, claim.ErrInvalid) || !strings.Contains(err.Error(), "shorter than two heartbeat intervals") {
				t.Errorf("SetConfig(%q, %q) = %v; want ErrInvalid saying the lease is shorter than two heartbeat intervals", kv[0], kv[1], err)
			}
		}
		if got, _ := s.Config(ctx); got != wantDefaults {
			t.Errorf("refused settings changed the config: %+v", got)
		}
		for _, kv := range [][2]string{{"heartbeat-interval", "500ms"}, {"lease", "1s"}} {
			if _, _, err := s.SetConfig(ctx, kv[0], kv[1]); err != nil {
				t.Errorf("SetConfig(%q, %q) = %v; want it accepted", kv[0], kv[1], err)
			}
		}
		c := claim.DefaultConfig()
		c.Lease = 3 * time.Second
		if err := c.Check(); !errors.Is(err, claim.ErrInvalid) {
			t.Errorf("Check() of lease 3s with heartbeat-interval 5s = %v, want ErrInvalid", err)
		}
	})
}

func TestConfigChanged(t *testing.T) {
	a := claim.DefaultConfig()
	if got := a.Changed(a); len(got) != 0 {
		t.Errorf("Changed of a config against itself = %v", got)
	}
	b := a
	b.Hooks.OnDead = "echo dead"
	b.Lease = time.Minute
	b.Limits.NoFile = 64
	if got, want := b.Changed(a), []string{"lease", "on-dead", "limit-nofile"}; !slices.Equal(got, want) {
		t.Errorf("Changed = %v, want %v (in ConfigKeys order)", got, want)
	}
}

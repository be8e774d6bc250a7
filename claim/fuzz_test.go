package claim

import (
	"errors"
	"strings"
	"testing"
)

// Fuzz targets of what users type: config values (here, inside the package,
// to reach the parser without a database), and batches of job specs.
// Seed corpora: testdata/fuzz/<target>/, besides the seeds added below.
//
//	go test -run '^$' -fuzz FuzzConfigValue -fuzztime 5m ./claim

// FuzzConfigValue checks `config set KEY VALUE` for any key and value: no
// panic; a refusal is an ErrInvalid that names the key and lists the keys;
// an accepted value is stored canonical, so that `config set KEY $(config
// get KEY)` accepts it again unchanged, and a stored value always loads.
func FuzzConfigValue(f *testing.F) {
	for _, k := range ConfigKeys {
		f.Add(k.Name, k.Default)
		f.Add(strings.ReplaceAll(strings.ToUpper(k.Name), "-", "_"), " 90 ")
	}
	for alias := range configAliases {
		f.Add(alias, "5")
		f.Add(alias, "1.5s")
	}
	for _, v := range []string{"", "-1", "0", "1e3", "0x10", "9223372036854775807", "876000h", "876001h",
		"1h30m", "99ms", "-0", "+5", " ", "10\x00", "٣", "1000", "1001", "3601"} {
		f.Add("lease", v)
		f.Add("max-retries", v)
		f.Add("poll-interval-ms", v)
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		key, unit, err := LookupConfigKey(name)
		if err != nil {
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "keys: "+configKeyNames()) {
				t.Fatalf("LookupConfigKey(%q) = %v, want an ErrInvalid listing the keys", name, err)
			}
			return
		}
		canon, err := normalize(key, unit, value)
		if err != nil {
			if !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), ErrInvalid.Error()+": "+key.Name+": ") ||
				!strings.Contains(err.Error(), "keys: ") {
				t.Fatalf("config set %q %q = %v, want an ErrInvalid naming %s and listing the keys", name, value, err, key.Name)
			}
			return
		}
		again, err := normalize(key, 0, canon)
		if err != nil || again != canon {
			t.Fatalf("config set %q %q stored %q, which `config set %s %s` reads as %q, %v", name, value, canon, key.Name, canon, again, err)
		}
		c := DefaultConfig()
		if err := key.set(&c, canon); err != nil || key.get(&c) != canon {
			t.Fatalf("config set %q %q stored %q, which loads as %q, %v", name, value, canon, key.get(&c), err)
		}
	})
}

// FuzzParseBatch checks what `enqueue -` and `enqueue -f` parse: no panic,
// every refusal an ErrInvalid with a message, and every job accepted valid.
func FuzzParseBatch(f *testing.F) {
	for _, seed := range []string{
		"", "\n", `{"command": "a"}`, "{\"command\": \"a\"}\n{\"command\": \"b\"}\n",
		"{\n  \"command\": \"multi-line\"\n}\n", "{\"command\": \"a\"}\n\n\n{\"id\": 1}\n",
		"{\"command\": \"a\"}\r\n{\"command\": \"b\"}\r\n", "[]\n[]", "{\"command\": \"a\"} {\"command\": \"b\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		jobs, err := ParseBatch(data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) || len(strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": ")) < 10 {
				t.Fatalf("ParseBatch(%q) = %v, want an ErrInvalid saying what is wrong", data, err)
			}
			return
		}
		if len(jobs) == 0 {
			t.Fatalf("ParseBatch(%q) = no jobs and no error", data)
		}
		for i, nj := range jobs {
			if err := nj.Validate(); err != nil {
				t.Fatalf("ParseBatch(%q) job %d fails Validate: %v", data, i, err)
			}
		}
	})
}

package jobs

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// specScanRead are specs scanSpec reads; specScanLeft, specs next to
// them that it leaves to decodeSpec.
var specScanRead = []string{
	`{"command": "echo 1"}`, ` {"command":"echo 1"} ` + "\n", `{}`,
	`{"id": "a", "command": "x", "max_retries": 3, "backoff_base": -2, "priority": 0, "queue": "q",
		"run_at": "2026-11-21T03:00:00Z", "delay": 90, "timeout": "30m", "env": {"A": "1", "B": ""},
		"cwd": "/tmp", "unique_key": "k", "label": "l", "after": ["b", "c"], "on_success": "s",
		"on_failure": "f", "on_dead": "d"}`,
	`{"command": "echo \"hi\" \\ \u00e9 \ud83d\ude00 \/", "env": {"\u0041": "\n"}}`,
	`{"command": null, "id": null, "priority": null, "delay": null, "timeout": null, "env": null, "after": null}`,
	`{"command": "x", "env": {}, "after": []}`, `{"command": "x", "delay": -1.5e3, "timeout": 0}`,
	`{"command": "x", "priority": -0}`, `{"command": "x", "priority": 9223372036854775807}`,
	`{"command": "\ud800"}`,
}

var specScanLeft = []string{
	`{"command": "x", "priority": 9223372036854775808}`, `{"command": "x", "priority": 1.0}`,
	`{"command": "x", "priority": 01}`, `{"command": "x", "priority": 1e2}`, `{"command": "x", "priority": "1"}`,
	`{"command": "x", "command": "y"}`, `{"Command": "x"}`, `{"comm\u0061nd": "x"}`, `{"command": "x",}`,
	`{"command": "x"} {}`, `{"command": "x"`, `{"command": "x", "env": {"A": "1", "A": "2"}}`,
	`{"command": "x", "env": {"A": "1", "\u0041": "2"}}`, `{"command": "x", "env": {"A": null}}`,
	`{"command": "x", "env": {"A": 1}}`, `{"command": "x", "after": [null]}`, `{"command": "x", "after": "a"}`,
	`{"command": "x", "limits": {"memory": "1G"}}`, `{"command": "x", "dead": {"attempts": 3}}`,
	`{"command": "x", "delay": [1]}`, `{"command": "x", "delay": -}`, `{"command": "x", "delay": 1.}`,
	`{"command": "x", "delay": 1e}`, "{\"command\": \"a\tb\"}", `{"command": "\x"}`, `{"command": "\u00"}`,
	`[]`, `null`, ``, `{"command": nul}`, `{"command": "x" "id": "y"}`,
}

// FuzzScanSpec holds scanSpec to decodeSpec: what scanSpec reads,
// decodeSpec decodes to the same spec.
func FuzzScanSpec(f *testing.F) {
	for _, seed := range append(specScanRead, specScanLeft...) {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) {
			return
		}
		got, ok := scanSpec(data)
		if !ok {
			return
		}
		want, err := decodeSpec(data)
		if err != nil {
			t.Fatalf("scanSpec(%q) read %s; decodeSpec refuses it: %v", data, showSpec(got), err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("scanSpec(%q) = %s, decodeSpec = %s", data, showSpec(got), showSpec(want))
		}
	})
}

// TestScanSpecReads: the everyday specs are read in one pass.
func TestScanSpecReads(t *testing.T) {
	for _, seed := range specScanRead {
		if _, ok := scanSpec([]byte(seed)); !ok {
			t.Errorf("scanSpec(%q) left it to decodeSpec", seed)
		}
	}
	for _, seed := range specScanLeft {
		if s, ok := scanSpec([]byte(seed)); ok {
			t.Errorf("scanSpec(%q) = %s, want it left to decodeSpec", seed, showSpec(s))
		}
	}
}

func showSpec(s spec) string {
	b, _ := json.Marshal(s)
	return string(b)
}

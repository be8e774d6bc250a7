package jobs

import (
	"encoding/json"
	"maps"
	"testing"
	"unicode/utf8"
)

// TestEscapeEnv: an env goes through JSON (EscapeEnv, json.Marshal,
// json.Unmarshal, UnescapeEnv) byte for byte; one that is all UTF-8 is
// written as before.
func TestEscapeEnv(t *testing.T) {
	for _, env := range []map[string]string{
		nil,
		{"A": "b", "PATH": "/bin", "EMPTY": "", "U": "caf\u00e9 \u2028"},
		{"X": "a\xffb", "Y": "\xc3", "OK": "ok"},
		{"N\xfe": "v", "M": "\xed\xa0\x80"},
		{"P": "\x00base64 is not an escape without its colon"},
	} {
		data, err := json.Marshal(EscapeEnv(env))
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(data) {
			t.Errorf("EscapeEnv(%q) is JSON that is not UTF-8: %q", env, data)
		}
		var back map[string]string
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		if got := UnescapeEnv(back); !maps.Equal(got, env) {
			t.Errorf("UnescapeEnv(EscapeEnv(%q)) through JSON = %q", env, got)
		}
		if plain, _ := json.Marshal(env); envValid(env) && string(plain) != string(data) {
			t.Errorf("EscapeEnv changed the JSON of %q: %s, was %s", env, data, plain)
		}
	}
}

// TestSpecJSONKeepsEnvBytes: a job's spec as JSON (a schedule's, each of
// whose runs is made from it) gives back the env's bytes.
func TestSpecJSONKeepsEnvBytes(t *testing.T) {
	env := map[string]string{"X": "a\xffb", "N\xfe": "v", "OK": "ok"}
	spec := NewJob{Command: "true", Env: env}.SpecJSON()
	nj, err := ParseSpec([]byte(spec))
	if err != nil || !maps.Equal(nj.Env, env) {
		t.Errorf("ParseSpec(%s) = env %q, %v; want env %q", spec, nj.Env, err, env)
	}
}

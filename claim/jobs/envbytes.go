package jobs

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// envEscape begins a name or value of an env that is not valid UTF-8, as
// the JSON that carries env between processes keeps it (the store's env
// column, the worker's socket): a JSON string holds text only, and
// encoding/json turns each byte that is not UTF-8 into U+FFFD, while a job
// must get its environment's bytes as they were given. The escape is
// followed by the bytes in base64. No name or value of an environment can
// hold a NUL (execve takes C strings), so no other string is read as one.
const envEscape = "\x00base64:"

// EscapeEnv returns env with each name and value that is not valid UTF-8
// escaped for JSON (envEscape); env itself when there is none, as is the
// case of every env stored before, whose JSON is thus unchanged.
func EscapeEnv(env map[string]string) map[string]string {
	if envValid(env) {
		return env
	}
	out := make(map[string]string, len(env))
	for k, v := range env {
		out[escapeEnv(k)] = escapeEnv(v)
	}
	return out
}

// UnescapeEnv undoes EscapeEnv: env itself when nothing in it is escaped.
func UnescapeEnv(env map[string]string) map[string]string {
	escaped := false
	for k, v := range env {
		if strings.HasPrefix(k, envEscape) || strings.HasPrefix(v, envEscape) {
			escaped = true
			break
		}
	}
	if !escaped {
		return env
	}
	out := make(map[string]string, len(env))
	for k, v := range env {
		out[unescapeEnv(k)] = unescapeEnv(v)
	}
	return out
}

func envValid(env map[string]string) bool {
	for k, v := range env {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return false
		}
	}
	return true
}

func escapeEnv(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return envEscape + base64.StdEncoding.EncodeToString([]byte(s))
}

func unescapeEnv(s string) string {
	rest, ok := strings.CutPrefix(s, envEscape)
	if !ok {
		return s
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return s
	}
	return string(b)
}

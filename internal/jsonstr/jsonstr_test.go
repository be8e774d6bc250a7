package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzAppend holds Append to encoding/json, with HTML escaping on and off.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\s`, "<a & b>", "\x00\x1f\b\f\n\r\t", "\u2028\u2029", "\xff\xfe", "é 日本 🙂"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := Append(nil, s, true); !bytes.Equal(got, want) {
			t.Errorf("html: Append(%q) = %s, encoding/json %s", s, got, want)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		want = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := Append(nil, s, false); !bytes.Equal(got, want) {
			t.Errorf("no html: Append(%q) = %s, encoding/json %s", s, got, want)
		}
	})
}

package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServe: `queuectl serve` answers with the data of `status --json`,
// and exits 0 on SIGTERM.
func TestServe(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "one", "--command", "true")
	p := h.start("serve", "--addr", "127.0.0.1:0", "--read-only")
	var base string
	addr := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)/`)
	waitFor(t, 30*time.Second, "serve to say its address", func() bool {
		if m := addr.FindStringSubmatch(p.stderr.String()); m != nil {
			base = m[1]
		}
		return base != ""
	})
	resp, err := http.Get(base + "/api/v1/status")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var got, want map[string]any
	json.Unmarshal(body, &got)
	json.Unmarshal([]byte(h.must("status", "--json")), &want)
	if got["pending"] != want["pending"] || got["pending"] != 1.0 {
		t.Errorf("GET /api/v1/status = %s; status --json says %v pending", body, want["pending"])
	}
	p.signal(t, syscall.SIGTERM)
	if code := p.exit(t, 30*time.Second); code != 0 {
		t.Errorf("serve after SIGTERM: exit %d, want 0\n%s", code, p.stderr)
	}
}

// TestServeRefusesAnOpenAddress: another address than loopback needs a
// token file, and a token file others can read is refused.
func TestServeRefusesAnOpenAddress(t *testing.T) {
	h := newHome(t)
	token := filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("s3cret\n"), 0o644)
	for _, args := range [][]string{
		{"serve", "--addr", "0.0.0.0:0"},
		{"serve", "--addr", ":0"},
		{"serve", "--addr", "127.0.0.1:0", "--token-file", token},
	} {
		_, stderr, code := h.run(args...)
		if code != 2 || !strings.Contains(stderr, "queuectl: hint: ") {
			t.Errorf("queuectl %s: exit %d, want 2 with a hint\n%s", strings.Join(args, " "), code, stderr)
		}
	}
}

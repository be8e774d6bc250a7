package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/internal/testenv"
)

// TestServe: `queuectl serve` answers with the data of `status --json`,
// and exits 0 on SIGTERM.
func TestServe(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "one", "--command", "true")
	p, base := h.serve(t, "--read-only")
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

// TestServeRefusesAnAddressWithoutPort: an --addr that is not HOST:PORT is
// a usage error that says so, not an address open to other machines (a
// bare 127.0.0.1 is loopback) nor a port to change (exit 1).
func TestServeRefusesAnAddressWithoutPort(t *testing.T) {
	h := newHome(t)
	for _, addr := range []string{"127.0.0.1", "localhost", "127.0.0.1:99999", "127.0.0.1:abc"} {
		_, stderr, code := h.run("serve", "--addr", addr)
		want := fmt.Sprintf("queuectl: error: usage: --addr %s is not HOST:PORT", addr)
		if code != 2 || !strings.Contains(stderr, want) || strings.Contains(stderr, "reachable from other machines") {
			t.Errorf("queuectl serve --addr %s: exit %d, want 2 saying %q\n%s", addr, code, want, stderr)
		}
	}
}

// TestServeReadOnlyWritesNothing: serve --read-only opens the store to
// read only, so on a copy of a home taken while a store had it open it
// refuses, saying why, instead of setting the copy's WAL aside.
func TestServeReadOnlyWritesNothing(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "one", "--command", "true")
	s, err := claim.Open(h.location())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Enqueue(context.Background(), claim.NewJob{ID: "two", Command: "true"}); err != nil {
		t.Fatal(err)
	}
	cp := &qhome{t: t, dir: filepath.Join(t.TempDir(), "copy")}
	if err := os.CopyFS(cp.dir, os.DirFS(h.dir)); err != nil {
		t.Fatal(err)
	}
	os.Chmod(cp.dir, 0o700)
	if fi, err := os.Stat(filepath.Join(cp.dir, "queue.db-wal")); err != nil || fi.Size() == 0 {
		t.Fatalf("the copy has no WAL to guard (%v)", err)
	}
	before := listDir(t, cp.dir)
	p := cp.start("serve", "--addr", "127.0.0.1:0", "--read-only")
	waitFor(t, 30*time.Second, "serve to start or exit", func() bool {
		select {
		case <-p.done:
			return true
		default:
			return strings.Contains(p.stderr.String(), "serving ")
		}
	})
	p.cmd.Process.Signal(syscall.SIGTERM) // if it serves: it may have exited
	code := p.exit(t, 30*time.Second)
	if after := listDir(t, cp.dir); after != before {
		t.Errorf("serve --read-only changed the copied home:\nbefore %s\nafter  %s", before, after)
	}
	if code != 1 || !strings.Contains(p.stderr.String(), "queue.db-wal was written for another database file") ||
		!strings.Contains(p.stderr.String(), "queuectl: hint: ") {
		t.Errorf("serve --read-only on a copied home: exit %d, want 1 with the reason and a hint\n%s", code, p.stderr)
	}
}

// listDir names the entries of dir with their sizes, one string.
func listDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		fi, _ := e.Info()
		fmt.Fprintf(&b, "%s:%d ", e.Name(), fi.Size())
	}
	return b.String()
}

// TestUnsafeHomeGetsNothing: a command refused for an unsafe home creates
// nothing in it first.
func TestUnsafeHomeGetsNothing(t *testing.T) {
	h := newHome(t)
	if err := os.Mkdir(h.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(h.dir, 0o777)
	_, stderr, code := h.run("list")
	if code != 1 || !strings.Contains(stderr, "writable by group or others") {
		t.Errorf("list in a world-writable home: exit %d, want 1 saying why\n%s", code, stderr)
	}
	if got := listDir(t, h.dir); got != "" {
		t.Errorf("the refused home got %s", got)
	}
}

// TestRestoreEndsWhatReadsTheOldStore: after `db restore` replaced the
// database file, the processes still reading the old one (serve, in both
// modes, and wait) say so and exit 1 (SPEC §6) rather than go on showing
// a store that is no longer there.
func TestRestoreEndsWhatReadsTheOldStore(t *testing.T) {
	h := newHome(t)
	h.must("enqueue", "--id", "old", "--command", "true", "--delay", "1h")
	backup := filepath.Join(t.TempDir(), "b.db")
	h.must("db", "backup", backup)
	readers := []*proc{
		h.start("serve", "--addr", "127.0.0.1:0"),
		h.start("serve", "--addr", "127.0.0.1:0", "--read-only"),
		h.start("wait", "old"),
	}
	// Each has the old store open once it says this.
	for i, said := range []string{"serving ", "serving ", "no live worker"} {
		waitFor(t, 30*time.Second, fmt.Sprintf("%v to say %q", readers[i].cmd.Args[1:], said), func() bool {
			return strings.Contains(readers[i].stderr.String(), said)
		})
	}
	h.must("db", "restore", backup)
	for _, p := range readers {
		if code := p.exit(t, 30*time.Second); code != 1 || !strings.Contains(p.stderr.String(), "database file replaced") {
			t.Errorf("queuectl %v after db restore: exit %d, want 1, saying the file was replaced\nstderr: %s", p.cmd.Args[1:], code, p.stderr)
		}
	}
}

// Without a token, serve answers only the user who runs it: every local
// user can reach 127.0.0.1, and the home's logs and actions are this
// user's alone. Another user gets 403 saying why, for the API and the
// pages alike; the user who serves is answered as before.
func TestServeRefusesAnotherLocalUser(t *testing.T) {
	uid, name := secondUser(t)
	curl, err := exec.LookPath("curl")
	if err != nil {
		testenv.Missing(t, "no curl to connect as another user: %v", err)
	}
	h := newHome(t)
	h.must("enqueue", "--id", "one", "--command", "echo s3cret-output")
	h.must("worker", "start", "--drain", "--no-spool")
	p, base := h.serve(t)
	for _, path := range []string{"/api/v1/jobs/one/runs/1/stdout", "/api/v1/csrf", "/", "/jobs/one", "/api/v1/jobs"} {
		cmd := exec.Command(curl, "-s", "-w", "\n%{http_code}", base+path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("curl %s as %s: %v", path, name, err)
		}
		want := fmt.Sprintf("this connection is from uid %d (%s), and without --token-file serve answers only", uid, name)
		if !strings.HasSuffix(string(out), "\n403") || !strings.Contains(string(out), want) || strings.Contains(string(out), "s3cret-output") {
			t.Errorf("GET %s as %s:\n%s\nwant 403 saying %q", path, name, out, want)
		}
	}
	// /metrics, counts only, answers a scraper of its own user (Prometheus).
	cmd := exec.Command(curl, "-s", "-w", "\n%{http_code}", base+"/metrics")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	if out, err := cmd.Output(); err != nil || !strings.HasSuffix(string(out), "\n200") || !strings.Contains(string(out), `queuectl_jobs{queue="default",state="completed"} 1`) {
		t.Errorf("GET /metrics as %s: %v\n%s\nwant 200 and the counts", name, err, out)
	}
	resp, err := http.Get(base + "/api/v1/jobs/one/runs/1/stdout")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "s3cret-output\n" {
		t.Errorf("GET the log as the user who serves: %d %q, want 200 and the output", resp.StatusCode, body)
	}
	p.signal(t, syscall.SIGTERM)
	if code := p.exit(t, 30*time.Second); code != 0 {
		t.Errorf("serve after SIGTERM: exit %d, want 0\n%s", code, p.stderr)
	}
}

// serve starts `queuectl serve` on a free port of 127.0.0.1, with args,
// and returns it and its base URL once it says where it listens.
func (h *qhome) serve(t *testing.T, args ...string) (p *proc, base string) {
	t.Helper()
	p = h.start(append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	addr := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)/`)
	waitFor(t, 30*time.Second, "serve to say its address", func() bool {
		if m := addr.FindStringSubmatch(p.stderr.String()); m != nil {
			base = m[1]
		}
		return base != ""
	})
	return p, base
}

// TestServeSaysTheAddressGiven: serve --addr 0.0.0.0:PORT says it serves on
// http://0.0.0.0:PORT/, the address given, not [::], which Go's listener
// reports for it; the port is the one bound (--addr HOST:0 picks one).
func TestServeSaysTheAddressGiven(t *testing.T) {
	h := newHome(t)
	token := filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("s3cret\n"), 0o600)
	p := h.start("serve", "--addr", "0.0.0.0:0", "--token-file", token)
	said := regexp.MustCompile(`serving \S+ on (http://\S+/) `)
	var url string
	waitFor(t, 30*time.Second, "serve to say its address", func() bool {
		if m := said.FindStringSubmatch(p.stderr.String()); m != nil {
			url = m[1]
		}
		return url != ""
	})
	if !regexp.MustCompile(`^http://0\.0\.0\.0:[1-9]\d*/$`).MatchString(url) {
		t.Errorf("serve --addr 0.0.0.0:0 says it serves on %s, want http://0.0.0.0:PORT/ with the port bound", url)
	}
	p.signal(t, syscall.SIGTERM)
	if code := p.exit(t, 30*time.Second); code != 0 {
		t.Errorf("serve after SIGTERM: exit %d, want 0\n%s", code, p.stderr)
	}
}

// TestServeOnATakenPortSuggestsAFreeOne: when the port asked for is taken,
// the hint gives the same host with a port near it that is free, not a
// fixed port that may be taken too (or be the one asked for).
func TestServeOnATakenPortSuggestsAFreeOne(t *testing.T) {
	h := newHome(t)
	// Two ports taken side by side: the next one up is taken too.
	var port int
	for range 100 {
		first, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port = first.Addr().(*net.TCPAddr).Port
		next, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port+1))
		if err == nil {
			defer first.Close()
			defer next.Close()
			break
		}
		first.Close()
		port = 0
	}
	if port == 0 {
		t.Fatal("found no two free ports side by side")
	}
	_, stderr, code := h.run("serve", "--addr", fmt.Sprintf("127.0.0.1:%d", port))
	m := regexp.MustCompile(`(?m)^queuectl: hint: .*queuectl serve --addr 127\.0\.0\.1:(\d+)$`).FindStringSubmatch(stderr)
	if code != 1 || m == nil {
		t.Fatalf("serve on a taken port: exit %d, want 1 with a hint of another --addr\n%s", code, stderr)
	}
	if got, _ := strconv.Atoi(m[1]); got <= port+1 || got > port+100 {
		t.Errorf("serve on taken port %d (and %d taken) suggests port %d, want a free one just above them", port, port+1, got)
	}
}

// TestServeOnAnAddressNotHereSaysWhy: an address that is not one of this
// machine's binds on no port: the hint says so, and names no port of it
// to try (HOST:0, any free port, fails as well).
func TestServeOnAnAddressNotHereSaysWhy(t *testing.T) {
	h := newHome(t)
	token := filepath.Join(t.TempDir(), "token")
	os.WriteFile(token, []byte("s3cret\n"), 0o600)
	host := ""
	for _, ip := range []string{"192.0.2.1", "198.51.100.1", "203.0.113.1"} { // for documentation only (RFC 5737)
		ln, err := net.Listen("tcp", ip+":0")
		if err == nil {
			ln.Close()
			continue
		}
		if errors.Is(err, syscall.EADDRNOTAVAIL) {
			host = ip
			break
		}
	}
	if host == "" {
		testenv.Missing(t, "this machine binds every address of RFC 5737 (or refuses them otherwise)")
	}
	_, stderr, code := h.run("serve", "--addr", host+":8080", "--token-file", token)
	want := "queuectl: hint: " + host + " is not an address of this machine"
	if code != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "--addr "+host) {
		t.Errorf("serve --addr %s:8080: exit %d, want 1 with a hint saying %q and no other port of %s\n%s", host, code, want, host, stderr)
	}
}

// TestServeOnAPrivilegedPortSaysWhy: a port that this user may not bind
// (below 1024, without CAP_NET_BIND_SERVICE) is said to be why, with a
// port that binds; not only a port to pick.
func TestServeOnAPrivilegedPortSaysWhy(t *testing.T) {
	testenv.Root(t, "take CAP_NET_BIND_SERVICE from serve (setpriv)")
	setpriv := testenv.LookPath(t, "setpriv", "util-linux")
	h := newHome(t)
	cmd := h.command("serve", "--addr", "127.0.0.1:80")
	cmd.Args = append([]string{setpriv, "--bounding-set", "-net_bind_service", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = setpriv
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	said := regexp.MustCompile(`(?m)^queuectl: hint: this user may not bind port 80 \(ports below 1024 need root or CAP_NET_BIND_SERVICE\); ` +
		`pick another port: queuectl serve --addr 127\.0\.0\.1:(\d+)$`)
	m := said.FindStringSubmatch(stderr.String())
	if shellCode(err) != 1 || m == nil {
		t.Fatalf("serve --addr 127.0.0.1:80 without CAP_NET_BIND_SERVICE: exit %d, want 1 with a hint saying why\n%s", shellCode(err), &stderr)
	}
	if port, _ := strconv.Atoi(m[1]); port != 0 && port < 1024 {
		t.Errorf("serve --addr 127.0.0.1:80 without CAP_NET_BIND_SERVICE suggests port %d, which it may not bind either", port)
	}
}

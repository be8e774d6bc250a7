package serve_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/serve"
)

// TestKeptLogs: a run of another host (claimed and ended there, in the
// shared store) is shown from the tail kept with it, never from a file of
// the same name here, with where its full log is; a run of this host whose
// file is gone is shown from its tail too; the API says so as show --json.
func TestKeptLogs(t *testing.T) {
	h := newHome(t)
	ctx := context.Background()
	h.enqueue(t, claim.NewJob{ID: "far", Command: "seq 1 20000"})
	c := claim.Claimant{WorkerID: "db1-1-1", Host: "db1/0a1b2c3d", PID: 1, Lease: time.Minute, LogDir: "/srv/q/logs"}
	_, r, err := h.store.Claim(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&out, "%d\n", i)
	}
	r.Tails = &claim.Tails{Stdout: claim.Tail{Data: out.Bytes(), Size: int64(out.Len())}, Stderr: claim.Tail{Data: []byte("warn\n"), Size: 5}}
	if _, err := h.store.Complete(ctx, r); err != nil {
		t.Fatal(err)
	}
	// A run of another host whose stderr printed nothing: no file there
	// to name, as for a run of this host.
	h.enqueue(t, claim.NewJob{ID: "hush", Command: "echo out"})
	_, r, err = h.store.Claim(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	r.Tails = &claim.Tails{Stdout: claim.Tail{Data: []byte("out\n"), Size: 4}}
	if _, err := h.store.Complete(ctx, r); err != nil {
		t.Fatal(err)
	}
	// A file of the same name here is another run's: never shown for it.
	os.MkdirAll(filepath.Join(h.dir, "logs", "far"), 0o700)
	os.WriteFile(filepath.Join(h.dir, "logs", "far", "1.out"), []byte("WRONG\n"), 0o600)

	h.enqueue(t, claim.NewJob{ID: "ok", Command: "echo fine"})
	h.worker(t, 1)
	h.waitState(t, "ok", claim.Completed)
	os.Remove(filepath.Join(h.dir, "logs", "ok", "1.out"))

	ts := h.serve(t, serve.Options{})
	want := out.Bytes()[out.Len()-claim.TailBytes:]
	resp, body := get(t, ts.URL+"/jobs/far/runs/1/stdout")
	if resp.StatusCode != http.StatusOK || body != string(want) {
		t.Errorf("GET raw stdout of another host's run = %d, %d bytes; want 200 and its last %d bytes", resp.StatusCode, len(body), len(want))
	}
	if got := resp.Header.Get("Queuectl-Log-File"); got != "db1:/srv/q/logs/far/1.out" {
		t.Errorf("Queuectl-Log-File = %q, want db1:/srv/q/logs/far/1.out", got)
	}
	if got := resp.Header.Get("Queuectl-Log-Kept"); got != fmt.Sprint(out.Len()) {
		t.Errorf("Queuectl-Log-Kept = %q, want %d", got, out.Len())
	}
	_, page := get(t, ts.URL+"/jobs/far")
	for _, s := range []string{"Run 1 ran on db1: showing the last 64 KiB of 106.3 KiB of its stdout, kept with the run. The full log is db1:/srv/q/logs/far/1.out.", "\n19999\n20000\n"} {
		if !strings.Contains(page, s) {
			t.Errorf("job page of another host's run does not contain %q", s)
		}
	}
	if strings.Contains(page, "WRONG") {
		t.Errorf("job page of another host's run shows a local file of the same name")
	}

	if _, body := get(t, ts.URL+"/jobs/ok/runs/1/stdout"); body != "fine\n" {
		t.Errorf("GET raw stdout of a run whose file is gone = %q, want the kept %q", body, "fine\n")
	}
	if _, page := get(t, ts.URL+"/jobs/ok"); !strings.Contains(page, "The log file is gone: showing all 5 bytes of it, kept with the run.") {
		t.Errorf("job page of a run whose file is gone does not say so")
	}

	resp, body = get(t, ts.URL+"/jobs/hush/runs/1/stderr")
	if got := resp.Header.Get("Queuectl-Log-File"); resp.StatusCode != http.StatusOK || body != "" || got != "" {
		t.Errorf("GET raw stderr of another host's run that printed none = %d, %q, Queuectl-Log-File %q; want 200, nothing, and no file named", resp.StatusCode, body, got)
	}
	if _, page := get(t, ts.URL+"/jobs/hush?attempt=1&stream=stderr"); strings.Contains(page, "1.err") {
		t.Errorf("job page of another host's run names the log file of a stream that printed nothing")
	}
	if _, body := get(t, ts.URL+"/api/v1/jobs/hush"); strings.Contains(body, `"stderr_file"`) || !strings.Contains(body, `"stdout_file"`) {
		t.Errorf("GET /api/v1/jobs/hush =\n%.800s\nwant stdout_file, and no stderr_file for a stream that printed nothing", body)
	}

	for _, id := range []string{"far", "ok", "hush"} {
		_, body := get(t, ts.URL+"/api/v1/jobs/"+id)
		cliOut, code := h.cli(t, "show", "--json", id)
		if code != 0 || body != cliOut || !strings.Contains(body, `"stdout_tail": "`) {
			t.Errorf("GET /api/v1/jobs/%s =\n%.600s\nshow --json (exit %d) =\n%.600s\nwant the same, with stdout_tail", id, body, code, cliOut)
		}
	}
	// The logs API: the kept tails as the text of runs whose files are not
	// here, from the runs it read with them (JSON-escaped below).
	for id, text := range map[string]string{"far": `\n19999\n20000\n"`, "ok": `"stdout_text": "fine\n"`} {
		if _, body := get(t, ts.URL+"/api/v1/jobs/"+id+"/logs"); !strings.Contains(body, text) || strings.Contains(body, "WRONG") {
			t.Errorf("GET /api/v1/jobs/%s/logs =\n%.600s\nwant the kept tail's text, %s", id, body, text)
		}
	}
}

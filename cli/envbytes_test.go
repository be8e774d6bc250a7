package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestEnvBytesAsGiven: a job's environment values reach it byte for byte,
// also those that are not UTF-8 (export X=$(printf '\xff')), which JSON
// strings cannot hold as they are: through the store (enqueue --env, a
// worker started later) and through the worker's socket (run carrying its
// caller's environment), on either engine.
func TestEnvBytesAsGiven(t *testing.T) {
	const value = "a\xffb\xc3 \xed\xa0\x80z"
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			h := newHome(t)
			if engine == "postgres" {
				h = newPostgresHome(t)
			}
			dir := t.TempDir()
			h.must("enqueue", "--id", "stored", "--env", "X="+value, "--env", "DIR="+dir, "--command", `printf %s "$X" > "$DIR/stored"`)
			h.must("worker", "start", "--drain", "--no-spool")
			if got, err := os.ReadFile(filepath.Join(dir, "stored")); err != nil || !bytes.Equal(got, []byte(value)) {
				t.Errorf("enqueue --env X=%q: the job got X=%q (%v)", value, got, err)
			}

			w := h.startServing()
			cmd := h.command("run", "--shell", `printf %s "$X"`)
			cmd.Env = append(cmd.Env, "X="+value)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil || !bytes.Equal(out.Bytes(), []byte(value)) {
				t.Errorf("run with X=%q in its environment: the job printed %q (%v)\nstderr: %s", value, out.Bytes(), err, errb.String())
			}
			h.must("worker", "stop", "--wait")
			<-w.done
		})
	}
}

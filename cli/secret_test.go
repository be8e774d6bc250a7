package cli

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/claim/postgres/pgtest"
	"github.com/queuectl/queuectl/run"
)

// TestSecretsStayOutOfSight (SPEC §6): a secret in run's environment and
// one given with --env reach their jobs, and no view prints them: not
// show, show --json, list, dlq list, logs, status, enqueue --json, the
// worker's lines, a hook's output, the API or the job page. show --env
// does. The dead file, which must re-run the job, carries it, mode 0600.
func TestSecretsStayOutOfSight(t *testing.T) {
	h := newHome(t)
	secret := "s3cr3t-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	h.must("config", "set", "on-dead", `env; echo "token=$MY_SECRET_TOKEN"; exit 1`)
	w := h.start("worker", "start", "--count", "2")
	waitFor(t, 30*time.Second, "the worker to register", func() bool {
		var st struct{ Workers []any }
		json.Unmarshal([]byte(h.must("status", "--json")), &st)
		return len(st.Workers) > 0
	})
	var views []string
	view := func(out string) { views = append(views, out) }

	run := h.command("run", "--id", "made", "--", "sh", "-c", `printf %s "$MY_SECRET_TOKEN" | sha256sum`)
	run.Env = append(run.Env, "MY_SECRET_TOKEN="+secret)
	out, err := run.CombinedOutput()
	if sum := sha256.Sum256([]byte(secret)); err != nil || !strings.Contains(string(out), hex.EncodeToString(sum[:])) {
		t.Fatalf("run: %v\n%s\nwant the secret's sha256: the job did not see it", err, out)
	}
	view(string(out))
	view(h.must("enqueue", "--json", "--id", "doomed", "--max-retries", "1", "--env", "MY_SECRET_TOKEN="+secret, "--command", "exit 3"))
	if _, errText, code := h.run("wait", "--timeout", "1m", "doomed"); code != 1 {
		t.Fatalf("wait doomed: exit %d, want 1 (dead)\n%s", code, errText)
	}

	var made struct {
		EnvNames []string `json:"env_names"`
	}
	json.Unmarshal([]byte(h.must("show", "--json", "made")), &made)
	if !slices.Contains(made.EnvNames, "MY_SECRET_TOKEN") || slices.Contains(made.EnvNames, "PATH") {
		t.Errorf("run stored env %v: want MY_SECRET_TOKEN, which the worker lacks, and not PATH, which it has", made.EnvNames)
	}
	for _, id := range []string{"made", "doomed"} {
		view(h.must("show", id))
		view(h.must("show", "--json", id))
		view(h.must("logs", "--all", id))
	}
	h.must("schedule", "add", "nightly", "--cron", "@daily", "--env", "MY_SECRET_TOKEN="+secret, "--command", "true")
	for _, args := range [][]string{{"list"}, {"list", "--json"}, {"dlq", "list", "--json"}, {"status", "--json"},
		{"schedule", "list"}, {"schedule", "list", "--json"}} {
		view(h.must(args...))
	}
	views = append(views, serveViews(t, h, "/api/v1/jobs/made", "/api/v1/jobs/doomed", "/api/v1/jobs", "/api/v1/dlq",
		"/jobs/made", "/jobs/doomed", "/api/v1/jobs/doomed/runs", "/api/v1/schedules", "/schedules")...)
	waitFor(t, 30*time.Second, "the on-dead hook to run", func() bool {
		return strings.Contains(h.must("show", "doomed"), "on_dead hook failed") || strings.Contains(w.stderr.String(), "on_dead")
	})
	view(w.stderr.String())
	view(w.stdout.String())
	for i, v := range views {
		if strings.Contains(v, secret) {
			t.Errorf("view %d prints the secret:\n%s", i, v)
		}
	}
	if got := h.must("show", "--env", "doomed"); !strings.Contains(got, "MY_SECRET_TOKEN="+secret) {
		t.Errorf("show --env doomed printed\n%s\nwant MY_SECRET_TOKEN=%s", got, secret)
	}

	// env-retention: a worker drops the env of jobs finished longer ago;
	// the dead job keeps its own, to be re-driven.
	h.must("config", "set", "env-retention", "1s")
	var done struct {
		FinishedAt time.Time `json:"finished_at"`
	}
	json.Unmarshal([]byte(h.must("show", "--json", "made")), &done)
	waitFor(t, 30*time.Second, "a second to pass since made finished", func() bool { return time.Since(done.FinishedAt) > 1500*time.Millisecond })
	pruner := h.start("worker", "start", "--no-spool")
	waitFor(t, 30*time.Second, "made's env to be dropped", func() bool {
		return !strings.Contains(h.must("show", "--env", "made"), "MY_SECRET_TOKEN=")
	})
	view(pruner.stderr.String())
	if !strings.Contains(h.must("show", "--env", "doomed"), "MY_SECRET_TOKEN=") {
		t.Error("env-retention dropped a dead job's env, which dlq retry needs")
	}

	dead := filepath.Join(h.dir, "dead", "doomed.json")
	fi, err := os.Stat(dead)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dead); fi.Mode().Perm() != 0o600 || !strings.Contains(string(b), secret) {
		t.Errorf("dead file: mode %v, want 0600 and the env that re-runs the job", fi.Mode().Perm())
	}
}

// serveViews starts `queuectl serve` on the home and returns the bodies of
// the paths.
func serveViews(t *testing.T, h *qhome, paths ...string) []string {
	t.Helper()
	_, base := h.serve(t, "--read-only")
	var bodies []string
	for _, path := range paths {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s\n%s", path, resp.Status, body)
		}
		bodies = append(bodies, string(body))
	}
	return bodies
}

// TestRunOverSocketStoresWhatWorkersLack: a run handed to the worker over
// its socket, by the front program or by the full one, stores what of the
// caller's environment the home's live workers lack, as the store path
// does, and every --env value, even one the worker has.
func TestRunOverSocketStoresWhatWorkersLack(t *testing.T) {
	h := newHome(t)
	secret := "s3cr3t-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	t.Setenv("MY_SECRET_TOKEN", secret) // the worker's as well as the caller's
	h.startServing()
	for _, args := range [][]string{
		{"run", "-q", "--", "sh", "-c", `echo "$QUEUECTL_JOB_ID"`},
		{"run", "-q", "--id", "by-full", "--", "sh", "-c", `echo "$QUEUECTL_JOB_ID"`},
	} {
		run := h.command(args...)
		run.Env = append(run.Env, "ONLY_THE_CALLER=yes")
		out, err := run.Output()
		if err != nil {
			t.Fatalf("queuectl %s: %v", strings.Join(args, " "), err)
		}
		id := strings.TrimSpace(string(out))
		env := h.must("show", "--env", id)
		if strings.Contains(env, secret) || !strings.Contains(env, "ONLY_THE_CALLER=yes") {
			t.Errorf("show --env %s (queuectl %s):\n%s\nwant ONLY_THE_CALLER, which the worker lacks, and not MY_SECRET_TOKEN, which it has",
				id, strings.Join(args, " "), env)
		}
	}
	h.must("run", "-q", "--id", "explicit", "--env", "MY_SECRET_TOKEN="+secret, "--", "true")
	if env := h.must("show", "--env", "explicit"); !strings.Contains(env, "MY_SECRET_TOKEN="+secret) {
		t.Errorf("show --env explicit:\n%s\nwant the --env value MY_SECRET_TOKEN kept", env)
	}
}

// TestRunUnsetsWhatTheCallerLacks: a variable the worker has and run's
// caller does not (make's unexport, env -u) is not in the job's
// environment either, by both programs; the job's QUEUECTL_ variables are.
func TestRunUnsetsWhatTheCallerLacks(t *testing.T) {
	h := newHome(t)
	t.Setenv("ONLY_THE_WORKER", "yes")
	// A name with a space, which QUEUECTL_UNSET cannot list, and one of
	// its words, which the caller has as the worker does.
	t.Setenv("ODD NAME", "worker's")
	t.Setenv("ODD", "kept")
	h.startServing()
	for _, prog := range []string{"queuectl", "queuectl-full"} {
		run := h.commandOf(prog, "run", "-q", "--", "sh", "-c", `echo "${ONLY_THE_WORKER-unset} $QUEUECTL_HOME ${ODD-unset} $(env | grep -c '^ODD NAME=')"`)
		run.Env = slices.DeleteFunc(run.Env, func(kv string) bool {
			return strings.HasPrefix(kv, "ONLY_THE_WORKER=") || strings.HasPrefix(kv, "ODD NAME=")
		})
		out, err := run.Output()
		if err != nil {
			t.Fatalf("%s run: %v", prog, err)
		}
		if want := "unset " + h.dir + " kept 0\n"; string(out) != want {
			t.Errorf("%s run of a caller without ONLY_THE_WORKER printed %q, want %q", prog, out, want)
		}
	}
}

// TestStorePasswordStaysOutOfSight: the password of a PostgreSQL store,
// in the URL's userinfo or as its password= parameter, is in no message
// that names the store: the worker's start-up line (text and JSON), status,
// doctor (text and JSON) with the server there, gone or without the
// database, db copy's refusal under a live worker, and a mistyped scheme.
func TestStorePasswordStaysOutOfSight(t *testing.T) {
	base := newPostgresHome(t)
	var b [8]byte
	rand.Read(b[:])
	// Letters and digits only, which no URL escapes: a message that shows
	// the password shows it as it is here.
	secret, role := "Pw"+hex.EncodeToString(b[:4]), "qtest_role_"+hex.EncodeToString(b[4:])
	pgtest.Exec(t, "CREATE ROLE "+role+" LOGIN PASSWORD '"+secret+"'")
	t.Cleanup(func() { pgtest.Exec(t, "DROP OWNED BY "+role+"; DROP ROLE "+role) })
	u, err := url.Parse(base.db)
	if err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, "GRANT USAGE, CREATE ON SCHEMA "+u.Query().Get("search_path")+" TO "+role)
	inUser, inQuery := *u, *u
	inUser.User = url.UserPassword(role, secret)
	inQuery.User = url.User(role)
	q := u.Query()
	q.Set("password", secret)
	inQuery.RawQuery = q.Encode()
	for name, dsn := range map[string]string{"userinfo": inUser.String(), "parameter": inQuery.String()} {
		t.Run(name, func(t *testing.T) {
			h := newHome(t)
			h.db = dsn
			views := storeViews(t, h)
			for _, db := range wrongStores(t, dsn) {
				other := *h
				other.db = db
				for _, args := range [][]string{{"status"}, {"doctor"}, {"doctor", "--json"}} {
					out, errText, code := other.run(args...)
					if code == 0 {
						t.Errorf("queuectl %s on %s: exit 0\n%s", strings.Join(args, " "), db, out)
					}
					views = append(views, out, errText)
				}
			}
			for i, v := range views {
				if strings.Contains(v, secret) {
					t.Errorf("view %d shows the store's password:\n%s", i, v)
				}
			}
		})
	}
}

// storeViews runs two workers on h (text and JSON lines), status, doctor
// and a db copy that they make refuse, stops them, and returns what each
// printed.
func storeViews(t *testing.T, h *qhome) []string {
	text := h.start("worker", "start")
	js := h.start("worker", "start", "--no-spool", "--log-format", "json")
	waitFor(t, 30*time.Second, "both workers' start-up lines", func() bool {
		return strings.Contains(text.stderr.String(), " started: ") && strings.Contains(js.stderr.String(), `"event":"start"`)
	})
	var views []string
	for _, args := range [][]string{{"status"}, {"doctor"}, {"doctor", "--json"}, {"db", "copy", "--to", filepath.Join(t.TempDir(), "copy.db")}} {
		out, errText, _ := h.run(args...)
		views = append(views, out, errText)
	}
	if refusal := views[len(views)-1]; !strings.Contains(refusal, "still run on postgres://") {
		t.Errorf("db copy under two workers: %q, want a refusal naming the store", refusal)
	}
	h.must("worker", "stop", "--wait")
	for _, w := range []*proc{text, js} {
		w.exit(t, 30*time.Second)
		if !strings.Contains(w.stderr.String(), "xxxxx@") && !strings.Contains(w.stderr.String(), "password=xxxxx") {
			t.Errorf("worker start-up line shows no store without its password:\n%s", w.stderr)
		}
		views = append(views, w.stderr.String(), w.stdout.String())
	}
	return views
}

// wrongStores are dsn made wrong: its server gone, its database not
// there, its scheme mistyped, a slash of its // left out.
func wrongStores(t *testing.T, dsn string) []string {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone, _ := url.Parse(dsn)
	gone.Host = closed.Addr().String()
	closed.Close()
	noDB, _ := url.Parse(dsn)
	noDB.Path = "/qtest_no_such_db"
	return []string{gone.String(), noDB.String(), "postgress" + strings.TrimPrefix(dsn, "postgres"), strings.Replace(dsn, "://", ":/", 1)}
}

// TestRunLeavesOutTheCallersStore: run stores none of its caller's
// QUEUECTL_HOME, QUEUECTL_DB (a PostgreSQL URL's password with it) and
// QUEUECTL_DB_PATH, whether handed to the worker by either program or
// stored by run itself, and the job sees only its worker's.
func TestRunLeavesOutTheCallersStore(t *testing.T) {
	h := newHome(t)
	caller := []string{"QUEUECTL_DB=" + filepath.Join(h.dir, "queue.db"), "QUEUECTL_DB_PATH=" + filepath.Join(h.dir, "queue.db")}
	script := `echo "${QUEUECTL_DB-unset} ${QUEUECTL_DB_PATH-unset}"`
	check := func(how, id, out string) {
		t.Helper()
		// The job has its worker's store (run.Worker.DB), not the caller's.
		if want := filepath.Join(h.dir, "queue.db") + " unset\n"; out != want {
			t.Errorf("%s: the job printed %q, want %q: its worker's store, no QUEUECTL_DB_PATH", how, out, want)
		}
		var j struct {
			EnvNames []string `json:"env_names"`
		}
		json.Unmarshal([]byte(h.must("show", "--json", id)), &j)
		if slices.Contains(j.EnvNames, "QUEUECTL_DB") || slices.Contains(j.EnvNames, "QUEUECTL_DB_PATH") || slices.Contains(j.EnvNames, "QUEUECTL_HOME") {
			t.Errorf("%s: job %s stored env %v, want none of the caller's QUEUECTL_HOME, QUEUECTL_DB, QUEUECTL_DB_PATH", how, id, j.EnvNames)
		}
	}

	stored := h.command("run", "--id", "stored", "--", "sh", "-c", script)
	stored.Env = append(stored.Env, caller...)
	p := h.startCmd(stored)
	waitFor(t, 30*time.Second, "run to store its job", func() bool { _, _, code := h.run("show", "stored"); return code == 0 })
	h.must("worker", "start", "--drain", "--no-spool")
	if code := p.exit(t, time.Minute); code != 0 {
		t.Fatalf("run stored: exit %d\n%s", code, p.stderr)
	}
	check("run without a worker", "stored", p.stdout.String())

	h.startServing()
	for _, prog := range []string{"queuectl", "queuectl-full"} {
		run := h.commandOf(prog, "run", "--id", "by-"+prog, "--", "sh", "-c", script)
		run.Env = append(run.Env, caller...)
		out, err := run.Output()
		if err != nil {
			t.Fatalf("%s run: %v", prog, err)
		}
		check(prog+" run handed to the worker", "by-"+prog, string(out))
	}
}

// A worker given its store by --db gives it to its jobs, so that a
// queuectl command in a job (a recipe's nested run) reaches the queue the
// job runs from, not an empty store in the home.
func TestJobsReachTheirWorkersStore(t *testing.T) {
	h := newHome(t)
	other := filepath.Join(t.TempDir(), "elsewhere.db")
	h.must("--db", other, "enqueue", "--id", "inner", "--command", "queuectl show --json inner")
	h.must("--db", other, "worker", "start", "--drain", "--no-spool")
	if out := h.must("--db", other, "logs", "inner"); !strings.Contains(out, `"id": "inner"`) {
		t.Errorf("the job's queuectl show printed %q; want the job itself, from its worker's store", out)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "queue.db")); err == nil {
		t.Error("the job's queuectl made a store in the home, not its worker's")
	}
}

// A worker's environment is read once: the one it started with is kept by
// its id, whatever its process is now; another id is read again.
func TestWorkerEnvsKeptByWorker(t *testing.T) {
	var kept workerEnvs
	self := claim.WorkerInfo{ID: "w-1", Host: run.HostID(), PID: os.Getpid()}
	env, ok := kept.of(self)
	if !ok || env["PATH"] == "" {
		t.Fatalf("this process's environment: %v, PATH %q", ok, env["PATH"])
	}
	gone := self
	gone.PID = 1 << 30 // no such process: only what was kept answers
	if again, ok := kept.of(gone); !ok || !maps.Equal(again, env) {
		t.Errorf("worker w-1 read again: %v", ok)
	}
	gone.ID = "w-2"
	if _, ok := kept.of(gone); ok {
		t.Error("worker w-2, whose process is gone, has an environment")
	}
	if _, ok := (*workerEnvs)(nil).of(self); !ok {
		t.Error("no workerEnvs: the environment is not read")
	}
}

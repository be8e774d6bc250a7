package sqlite

import (
	"bufio"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// unmarkedEnv makes the test binary the process of unmarkedWriter: it
// opens the database named by its value with SQLite alone, as a queuectl
// from before the content mark does.
const unmarkedEnv = "QUEUECTL_TEST_UNMARKED_WRITER"

func TestMain(m *testing.M) {
	if path := os.Getenv(unmarkedEnv); path != "" {
		if err := unmarkedWriter(path, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// unmarkedWriter inserts a job and checkpoints (SQLite's own, as its
// automatic checkpoint does), says "checkpointed", and inserts one more job
// for each line it reads, saying "inserted", with its connection open
// until its input ends.
func unmarkedWriter(path string, in io.Reader, out io.Writer) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	insert := func(id string) error {
		_, err := db.Exec(`INSERT INTO jobs (id, command, state, max_retries, backoff_base, created_at, updated_at, run_after)
			VALUES (?, 'true', 'pending', 3, 2, 0, 0, 0)`, id)
		return err
	}
	if err := insert("old-1"); err != nil {
		return err
	}
	if _, err := db.Exec("PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
		return err
	}
	fmt.Fprintln(out, "checkpointed")
	sc := bufio.NewScanner(in)
	for n := 2; sc.Scan(); n++ {
		if err := insert(fmt.Sprintf("old-%d", n)); err != nil {
			return err
		}
		fmt.Fprintln(out, "inserted")
	}
	return sc.Err()
}

// A queuectl from before the content mark, still running beside a newer
// one after an upgrade, checkpoints without recording the mark. That is
// not an overwrite: a store that has the file open goes on using it, and
// one opened then keeps the WAL, which the older process goes on writing,
// instead of setting it aside with its commits.
func TestCheckpointOfUnmarkedProcessIsNoOverwrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.db")
	e, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), unmarkedEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	said := bufio.NewScanner(stdout)
	expect := func(want string) {
		t.Helper()
		if !said.Scan() || said.Text() != want {
			t.Fatalf("the older process said %q (%v), want %q", said.Text(), said.Err(), want)
		}
	}
	expect("checkpointed")

	if err := e.Check(); err != nil {
		t.Errorf("Check() after the older process's checkpoint = %v, want nil", err)
	}
	later, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer later.Close()
	if aside, _ := filepath.Glob(path + "-wal.foreign-*"); len(aside) > 0 {
		t.Errorf("a store opened after the older process's checkpoint set its WAL aside: %v", aside)
	}
	fmt.Fprintln(stdin, "insert")
	expect("inserted")
	for name, s := range map[string]*Engine{"open before": e, "opened after": later} {
		var n int
		if err := s.db.QueryRow("SELECT count(*) FROM jobs WHERE id LIKE 'old-%'").Scan(&n); err != nil || n != 2 {
			t.Errorf("the store %s sees %d (%v) of the older process's 2 jobs", name, n, err)
		}
	}
}

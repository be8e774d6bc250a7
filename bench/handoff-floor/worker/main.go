// Command worker is the smallest durable hand-off: for each connection on
// a Unix socket it reads one line (a shell command), INSERTs the job and
// COMMITs it (WAL, synchronous=FULL: the fsync is the promise that an
// acknowledged job survives a crash), marks it running, runs /bin/sh -c
// CMD with stdout and stderr written to logs/<id>.log and copied to the
// client, records completion (UPDATE, COMMIT, fsync'd), then sends the
// exit status. At most -slots jobs run at once.
//
// -running picks how "running" is recorded:
//
//	same    state='running' in the INSERT's own transaction (1 fsync before the run)
//	nosync  a separate UPDATE committed with synchronous=OFF (no fsync)
//	sync    a separate UPDATE committed with synchronous=FULL (2 fsyncs before the run)
//
// -sync OFF drops every fsync: no longer durable, a control that shows what
// the fsyncs themselves cost.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/binary"
	"flag"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"

	_ "modernc.org/sqlite"
)

var (
	db        *sql.DB
	logs      string
	running   string
	syncLevel string
	slots     chan struct{}
)

func main() {
	sock := flag.String("sock", "handoff.sock", "Unix socket to listen on")
	dbPath := flag.String("db", "handoff.db", "SQLite database")
	flag.StringVar(&logs, "logs", "logs", "directory of per-run log files")
	flag.StringVar(&running, "running", "same", "how running is recorded: same, nosync or sync")
	n := flag.Int("slots", 4, "jobs run at once")
	flag.StringVar(&syncLevel, "sync", "FULL", "synchronous for every commit; OFF makes the pair not durable (a control)")
	flag.Parse()
	slots = make(chan struct{}, *n)

	var err error
	// One connection: SQLite has one writer anyway, and per-connection
	// pragmas (synchronous) then hold for every statement.
	db, err = sql.Open("sqlite", *dbPath+"?_pragma=journal_mode(WAL)&_pragma=synchronous("+syncLevel+")&_pragma=busy_timeout(5000)")
	check(err)
	db.SetMaxOpenConns(1)
	_, err = db.Exec(`CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, command TEXT NOT NULL,
		state TEXT NOT NULL, exit_code INTEGER)`)
	check(err)
	check(os.MkdirAll(logs, 0o755))
	os.Remove(*sock)
	ln, err := net.Listen("unix", *sock)
	check(err)
	for {
		c, err := ln.Accept()
		check(err)
		go serve(c)
	}
}

func serve(c net.Conn) {
	defer c.Close()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return
	}
	cmd := line[:len(line)-1]

	// 1. the job, durable before anything else happens
	state := "queued"
	if running == "same" {
		state = "running"
	}
	res, err := db.Exec(`INSERT INTO jobs (command, state) VALUES (?, ?)`, cmd, state)
	check(err) // an autocommit statement: its own COMMIT, fsync'd (FULL)
	id, _ := res.LastInsertId()

	slots <- struct{}{}
	defer func() { <-slots }()
	// 2. running
	switch running {
	case "nosync": // the one connection held across the three statements
		conn, err := db.Conn(context.Background())
		check(err)
		for _, q := range []string{`PRAGMA synchronous=OFF`, `UPDATE jobs SET state='running' WHERE id=?`, `PRAGMA synchronous=` + syncLevel} {
			_, err = conn.ExecContext(context.Background(), q, id)
			check(err)
		}
		conn.Close()
	case "sync":
		exec1(`UPDATE jobs SET state='running' WHERE id=?`, id)
	}

	// 3. the run: output to its log file and to the client, one pipe for both
	f, err := os.Create(filepath.Join(logs, strconv.FormatInt(id, 10)+".log"))
	check(err)
	w := &tee{f: f, c: c}
	p := exec.Command("/bin/sh", "-c", cmd)
	p.Stdout, p.Stderr = w, w
	code := 0
	if err := p.Run(); err != nil {
		code = 255
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() >= 0 {
			code = ee.ExitCode()
		}
	}
	f.Close()

	// 4. completion, fsync'd, before the client hears of it
	exec1(`UPDATE jobs SET state='done', exit_code=? WHERE id=?`, code, id)
	c.Write([]byte{'x', byte(code)})
}

// exec1 runs one statement, autocommitted, on the one connection.
func exec1(q string, args ...any) {
	_, err := db.Exec(q, args...)
	check(err)
}

// tee writes the job's output to the log file and to the client in frames
// 'o', uint16 length, bytes.
type tee struct {
	mu sync.Mutex
	f  *os.File
	c  net.Conn
}

func (t *tee) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.f.Write(b)
	written := len(b)
	for len(b) > 0 {
		n := min(len(b), 65535)
		h := []byte{'o', 0, 0}
		binary.BigEndian.PutUint16(h[1:], uint16(n))
		t.c.Write(append(h, b[:n]...))
		b = b[n:]
	}
	return written, nil
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

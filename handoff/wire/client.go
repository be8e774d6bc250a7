package wire

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim/jobs"
)

// answerTimeout bounds the wait for the worker's answer: its commit may
// wait for the store's write lock, as long as the store's busy timeout.
const answerTimeout = time.Minute

// Enqueue hands nj to the worker serving the socket at path, for the
// database db, and returns once the worker has stored it durably. nj must
// carry its id (jobs.NewID when the user gave none), so that an unknown
// outcome can be looked up. Errors: ErrDeclined (nothing was stored: store
// the job directly), ErrUnknown (it may be stored: look it up by id first).
func Enqueue(path, db string, nj jobs.NewJob) (jobs.Result, error) {
	var a Answer[jobs.Job]
	err := enqueue(path, Request{DB: db, Job: nj}, func(line []byte) error { return json.Unmarshal(line, &a) }, &a.Declined, &a.Unknown)
	if err != nil {
		return jobs.Result{}, err
	}
	return jobs.Result{Job: a.Job, Outcome: a.Outcome}, nil
}

// Brief is what the small queuectl prints of a job it enqueued.
type Brief struct {
	ID        string
	UniqueKey string
	State     jobs.State
}

// EnqueueBrief is Enqueue for a caller that needs only the Brief of the
// stored job: it reads the answer with ParseBrief, not encoding/json.
func EnqueueBrief(path, db string, nj jobs.NewJob) (Brief, jobs.Outcome, error) {
	var a Answer[Brief]
	err := enqueue(path, Request{DB: db, Job: nj}, func(line []byte) (err error) { a, err = ParseBrief(line); return err }, &a.Declined, &a.Unknown)
	return a.Job, a.Outcome, err
}

// enqueue sends req on a socket of its own and reads the answer with
// decode, which fills *declined and *unknown.
func enqueue(path string, req Request, decode func([]byte) error, declined *string, unknown *bool) error {
	if !isMySocket(path) {
		return ErrDeclined
	}
	c, err := dial(path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrDeclined, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(answerTimeout))
	req.Fingerprint = Fingerprint(false)
	// An answer is a line of a few hundred bytes (readLine takes longer
	// ones in parts).
	_, err = ask(c, req, 2<<10, decode, declined, unknown)
	return err
}

// slowAnswer is how long a client waits for the worker's answer before
// it says that it waits.
const slowAnswer = 5 * time.Second

// ask sends req on c and reads the worker's answer into decode. The
// reader it returns holds whatever the worker wrote after the answer.
// An answer that takes longer than slowAnswer (the worker's commit waits
// on a lock another session holds on its store, or the worker is stopped)
// is said on stderr, once: the clients are queuectl's commands, whose
// stderr is their user's, and a command that waits without a word looks
// hung.
func ask(c *os.File, req Request, size int, decode func([]byte) error, declined *string, unknown *bool) (*bufio.Reader, error) {
	data, err := AppendRequest(make([]byte, 0, 1024), req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDeclined, err)
	}
	if _, err := c.Write(data); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnknown, err)
	}
	r := bufio.NewReaderSize(c, size)
	var part []byte
	c.SetReadDeadline(time.Now().Add(slowAnswer))
	line, err := readLine(r, &part)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		fmt.Fprintf(os.Stderr, "queuectl: the worker has not answered in %v; still waiting: another session may hold a lock on its store, or the worker be stopped. Ctrl-C gives up\n", slowAnswer)
		c.SetReadDeadline(time.Now().Add(answerTimeout - slowAnswer))
		line, err = readLine(r, &part)
	}
	if err == nil {
		err = decode(line)
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrUnknown, err)
	case *unknown:
		return nil, fmt.Errorf("%w: %s", ErrUnknown, *declined)
	case *declined != "":
		return nil, fmt.Errorf("%w: %s", ErrDeclined, *declined)
	}
	return r, nil
}

// readLine reads one line of at most MaxLine bytes and returns it, valid
// until the next read of r. A line longer than r's buffer is gathered in
// *part; a read that fails (a deadline) keeps what it read in *part, for
// the next call to finish the line.
func readLine(r *bufio.Reader, part *[]byte) ([]byte, error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if err == nil && len(*part) == 0 {
			return chunk, nil // the line is in r's buffer: no copy
		}
		*part = append(*part, chunk...)
		switch {
		case len(*part) > MaxLine:
			return nil, fmt.Errorf("a line over %d bytes", MaxLine)
		case err == bufio.ErrBufferFull:
			continue
		case err != nil:
			return nil, err
		}
		line := *part
		*part = nil
		return line, nil
	}
}

// isMySocket reports whether path is a socket of this user's.
func isMySocket(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().Type() == os.ModeSocket && ownedByMe(fi)
}

// Listening reports whether a live process of this user accepts on the
// socket at path: a worker of the home the socket is in. false with a nil
// error when there is no socket or nobody accepts on it (a worker that
// died leaves its socket behind); an error when that cannot be told (the
// system cannot check the peer, a socket path too long).
func Listening(path string) (bool, error) {
	f, err := dial(path)
	if err == nil {
		f.Close()
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
		return false, nil
	}
	return false, err
}

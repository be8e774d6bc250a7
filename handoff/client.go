package handoff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
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
	_, a, err := hand[jobs.Job](request{DB: db, Job: nj}, path)
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
// stored job, which it reads without the whole job's decoding.
func EnqueueBrief(path, db string, nj jobs.NewJob) (Brief, jobs.Outcome, error) {
	_, a, err := hand[Brief](request{DB: db, Job: nj}, path)
	return a.Job, a.Outcome, err
}

// ask sends req on conn and reads the worker's answer. The reader it
// returns holds whatever the worker wrote after the answer.
func ask[J any](conn *net.UnixConn, req request) (answer[J], *bufio.Reader, error) {
	if err := sameUser(conn); err != nil {
		return answer[J]{}, nil, fmt.Errorf("%w: %v", ErrDeclined, err)
	}
	data, err := appendRequest(make([]byte, 0, 1024), req)
	if err != nil {
		return answer[J]{}, nil, fmt.Errorf("%w: %v", ErrDeclined, err)
	}
	conn.SetDeadline(time.Now().Add(answerTimeout))
	if _, err := conn.Write(data); err != nil {
		return answer[J]{}, nil, fmt.Errorf("%w: %v", ErrUnknown, err)
	}
	// An answer is a line of a few hundred bytes (readLine takes longer
	// ones in parts); a follow's frames carry the job's output.
	size := 4 << 10
	if req.Follow {
		size = 64 << 10
	}
	r := bufio.NewReaderSize(conn, size)
	var part []byte
	line, err := readLine(r, &part)
	var a answer[J]
	if err == nil {
		err = json.Unmarshal(line, &a)
	}
	switch {
	case err != nil:
		return answer[J]{}, nil, fmt.Errorf("%w: %v", ErrUnknown, err)
	case a.Unknown:
		return answer[J]{}, nil, fmt.Errorf("%w: %s", ErrUnknown, a.Declined)
	case a.Declined != "":
		return answer[J]{}, nil, fmt.Errorf("%w: %s", ErrDeclined, a.Declined)
	}
	conn.SetDeadline(time.Time{})
	return a, r, nil
}

// readLine reads one line of at most maxLine bytes into *part, and returns
// it. A read that fails (a deadline) keeps what it read in *part, for the
// next call to finish the line.
func readLine(r *bufio.Reader, part *[]byte) ([]byte, error) {
	for {
		chunk, err := r.ReadSlice('\n')
		*part = append(*part, chunk...)
		switch {
		case len(*part) > maxLine:
			return nil, fmt.Errorf("a line over %d bytes", maxLine)
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

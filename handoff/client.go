package handoff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"time"

	"github.com/queuectl/queuectl/claim"
)

// answerTimeout bounds the wait for the worker's answer: its commit may
// wait for the store's write lock, as long as the store's busy timeout.
const answerTimeout = time.Minute

// Enqueue hands nj to the worker serving the socket at path, for the
// database db, and returns once the worker has stored it durably. nj must
// carry its id (claim.NewID when the user gave none), so that an unknown
// outcome can be looked up. Errors: ErrDeclined (nothing was stored: store
// the job directly), ErrUnknown (it may be stored: look it up by id first).
func Enqueue(path, db string, nj claim.NewJob) (claim.Result, error) {
	_, a, err := hand(request{DB: db, Job: nj}, path)
	if err != nil {
		return claim.Result{}, err
	}
	return claim.Result{Job: a.Job, Outcome: a.Outcome}, nil
}

// ask sends req on conn and reads the worker's answer. The reader it
// returns holds whatever the worker wrote after the answer.
func ask(conn *net.UnixConn, req request) (answer, *bufio.Reader, error) {
	if err := sameUser(conn); err != nil {
		return answer{}, nil, fmt.Errorf("%w: %v", ErrDeclined, err)
	}
	data, err := encode(req)
	if err != nil {
		return answer{}, nil, fmt.Errorf("%w: %v", ErrDeclined, err)
	}
	conn.SetDeadline(time.Now().Add(answerTimeout))
	if _, err := conn.Write(data); err != nil {
		return answer{}, nil, fmt.Errorf("%w: %v", ErrUnknown, err)
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	var part []byte
	line, err := readLine(r, &part)
	var a answer
	if err == nil {
		err = json.Unmarshal(line, &a)
	}
	switch {
	case err != nil:
		return answer{}, nil, fmt.Errorf("%w: %v", ErrUnknown, err)
	case a.Unknown:
		return answer{}, nil, fmt.Errorf("%w: %s", ErrUnknown, a.Declined)
	case a.Declined != "":
		return answer{}, nil, fmt.Errorf("%w: %s", ErrDeclined, a.Declined)
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

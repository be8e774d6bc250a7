package handoff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
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
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != os.ModeSocket || !ownedByMe(fi) {
		return claim.Result{}, ErrDeclined
	}
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return claim.Result{}, ErrDeclined
	}
	defer conn.Close()
	if err := sameUser(conn); err != nil {
		return claim.Result{}, fmt.Errorf("%w: %v", ErrDeclined, err)
	}
	data, err := encode(request{Fingerprint: fingerprint(), DB: db, Job: nj})
	if err != nil {
		return claim.Result{}, fmt.Errorf("%w: %v", ErrDeclined, err)
	}
	conn.SetDeadline(time.Now().Add(answerTimeout))
	if _, err := conn.Write(data); err != nil {
		return claim.Result{}, fmt.Errorf("%w: %v", ErrUnknown, err)
	}
	line, err := bufio.NewReader(io.LimitReader(conn, maxLine)).ReadBytes('\n')
	var a answer
	if err == nil {
		err = json.Unmarshal(line, &a)
	}
	switch {
	case err != nil:
		return claim.Result{}, fmt.Errorf("%w: %v", ErrUnknown, err)
	case a.Unknown:
		return claim.Result{}, fmt.Errorf("%w: %s", ErrUnknown, a.Declined)
	case a.Declined != "":
		return claim.Result{}, fmt.Errorf("%w: %s", ErrDeclined, a.Declined)
	}
	return claim.Result{Job: a.Job, Outcome: a.Outcome}, nil
}

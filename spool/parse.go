package spool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/queuectl/queuectl/claim"
)

// MaxSize is the largest spool file accepted, in bytes (1 MiB).
const MaxSize = 1 << 20

// bom is the UTF-8 byte order mark some editors put before the text.
var bom = []byte("\xef\xbb\xbf")

// Parse decodes the content of the spool file called name (used in
// messages). It does no I/O. Errors wrap claim.ErrInvalid and say what to fix.
func Parse(name string, data []byte) (claim.NewJob, error) {
	if len(data) > MaxSize {
		return claim.NewJob{}, fmt.Errorf("%s: %w: the file is %d bytes, over the limit of 1 MiB; keep the job spec small and put large data in a file the command reads",
			name, claim.ErrInvalid, len(data))
	}
	nj, err := claim.ParseSpec(data) // which drops a byte order mark
	if err != nil {
		return claim.NewJob{}, fmt.Errorf("%s: %w", name, err)
	}
	return nj, nil
}

// complete reports whether data is one whole JSON value. A file that fails
// to parse but is complete is wrong; one that is not may still be written.
func complete(data []byte) bool {
	return json.Valid(bytes.TrimPrefix(data, bom))
}

// broken reports whether data went wrong before its end: an invalid
// character, or more than white space after one whole value. No bytes a
// writer appends can mend that, so such a file is rejected without waiting
// for it to settle. Data that is only cut short (encoding/json's
// "unexpected end of JSON input"), empty, white space or part of a byte
// order mark may still be a file being written, and is not broken; nor is
// data that goes wrong at a zero byte, which may be a hole that a writer
// out of order (or a preallocation) has yet to fill.
func broken(data []byte) bool {
	if bytes.HasPrefix(bom, data) {
		return false // nothing yet, or part of a byte order mark
	}
	data = bytes.TrimPrefix(data, bom)
	dec := json.NewDecoder(bytes.NewReader(data))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		var syntax *json.SyntaxError
		if !errors.As(err, &syntax) {
			return false // io.EOF or io.ErrUnexpectedEOF: cut short
		}
		at := syntax.Offset - 1 // the byte it went wrong at
		return at < 0 || at >= int64(len(data)) || data[at] != 0
	}
	rest := bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n")
	return len(rest) > 0 && rest[0] != 0
}

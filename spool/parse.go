package spool

import (
	"bytes"
	"encoding/json"
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

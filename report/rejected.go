package report

import (
	"strconv"
	"time"
)

// RejectedFile is one file in rejected/ (the caller reads them from the
// spool package, which report does not import).
type RejectedFile struct {
	Name   string
	Size   int64
	At     time.Time // when it was rejected
	Reason string    // what is wrong; "" when the reason file is gone
	Fix    string    // how to fix it
}

// RejectedObject is the JSON shape of one rejected file.
type RejectedObject struct {
	Name       string `json:"name"`
	Size       int64  `json:"size"`
	RejectedAt string `json:"rejected_at"`
	Reason     string `json:"reason"`
	Fix        string `json:"fix,omitempty"`
}

// Rejected renders `rejected list`: a table of name, size, age and reason;
// or one JSON array (`[]` when empty) of {name, size, rejected_at, reason,
// fix}.
func (p Printer) Rejected(files []RejectedFile) error {
	if p.JSON {
		return WriteJSON(p.Out, RejectedJSON(files))
	}
	rows := make([][]string, len(files))
	for i, f := range files {
		rows[i] = []string{oneLine(f.Name), strconv.FormatInt(f.Size, 10), p.age(f.At), orNone(clip(oneLine(f.Reason), 100))}
	}
	return writeTable(p.Out, []string{"NAME", "SIZE", "REJECTED", "REASON"}, rows)
}

// RejectedJSON is the JSON shape of `rejected list`; never nil.
func RejectedJSON(files []RejectedFile) []RejectedObject {
	out := make([]RejectedObject, len(files))
	for i, f := range files {
		out[i] = RejectedObject{Name: f.Name, Size: f.Size, RejectedAt: stamp(f.At), Reason: f.Reason, Fix: f.Fix}
	}
	return out
}

package report

import "fmt"

// Backup is what `db backup` wrote, or what `db restore` put back.
type Backup struct {
	Store string `json:"store"`
	File  string `json:"file"`
	Bytes int64  `json:"bytes"`
	// Kept is where `db restore` kept the database it replaced, with its
	// WAL beside it ("" when there was none).
	Kept string `json:"kept,omitempty"`
}

// BackedUp renders `db backup`: one line, or one JSON object.
func (p Printer) BackedUp(b Backup) error {
	if p.JSON {
		return WriteJSON(p.Out, b)
	}
	_, err := fmt.Fprintf(p.Out, "Backed up %s to %s (%d bytes)\n", b.Store, b.File, b.Bytes)
	return err
}

// Restored renders `db restore`: one or two lines, or one JSON object.
func (p Printer) Restored(b Backup) error {
	if p.JSON {
		return WriteJSON(p.Out, b)
	}
	if _, err := fmt.Fprintf(p.Out, "Restored %s from %s (%d bytes)\n", b.Store, b.File, b.Bytes); err != nil || b.Kept == "" {
		return err
	}
	_, err := fmt.Fprintf(p.Out, "The database it replaced is kept as %s\n", b.Kept)
	return err
}

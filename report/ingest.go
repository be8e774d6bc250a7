package report

// IngestStats counts what one `ingest` pass did with the spool's files.
type IngestStats struct {
	Ingested   int `json:"ingested"`   // new jobs
	Redriven   int `json:"redriven"`   // dead/ files dropped back: dead jobs pending again
	Skipped    int `json:"skipped"`    // a live job holds the file's unique_key
	Duplicates int `json:"duplicates"` // committed before an ingester stopped; file removed
	Rejected   int `json:"rejected"`   // moved to rejected/ beside a reason
	Waiting    int `json:"waiting"`    // not yet complete JSON: left for a later pass
}

// Ingested renders `ingest --json`: one object of counts. Without JSON it
// prints nothing: the command's lines on stderr say it.
func (p Printer) Ingested(st IngestStats) error {
	if !p.JSON {
		return nil
	}
	return WriteJSON(p.Out, st)
}

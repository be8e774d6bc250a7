package report

import (
	"fmt"
	"io"

	"github.com/queuectl/queuectl/claim"
)

// RunHeader writes the line `logs --all` puts before each run's output:
// == attempt N · worker W · exit_code=X · started T ==
// (exit_code=- while the run has no exit code).
func RunHeader(w io.Writer, r claim.Run) error {
	code := "-"
	if r.ExitCode != nil {
		code = fmt.Sprint(*r.ExitCode)
	}
	_, err := fmt.Fprintf(w, "== attempt %d · worker %s · exit_code=%s · started %s ==\n",
		r.Attempt, r.WorkerID, code, stamp(r.StartedAt))
	return err
}

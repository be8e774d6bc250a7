package report

import (
	"fmt"
	"io"

	"github.com/queuectl/queuectl/claim"
)

// RunHeader writes the line `logs --all` puts before each run's output:
// == attempt N · worker W · exit_code=X · started T ==
// (exit_code=- while the run has no exit code). When what follows is not
// the run's log file but what the store kept of it (SPEC §9), kept says so
// before the closing ==: "kept: the last 64 KiB of 200 KiB of
// db1:/…/2.out", so that the header tells even where stderr is not read.
func RunHeader(w io.Writer, r claim.Run, kept string) error {
	code := "-"
	if r.ExitCode != nil {
		code = fmt.Sprint(*r.ExitCode)
	}
	if kept != "" {
		kept = " · kept: " + kept
	}
	_, err := fmt.Fprintf(w, "== attempt %d · worker %s · exit_code=%s · started %s%s ==\n",
		r.Attempt, r.WorkerID, code, stamp(r.StartedAt), kept)
	return err
}

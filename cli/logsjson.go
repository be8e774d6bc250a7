package cli

import (
	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/run"
)

// json prints the runs logs would print, from attempt first on (only
// that one without --all), with both streams' text. Each run object is
// the one show --json prints: no path for a stream that printed nothing.
func (l *logPrinter) json(runs []claim.Run, first int) error {
	var shown []claim.Run
	var outs, errs []string
	for _, r := range runs {
		if r.Attempt < first || (!l.c.Bool("all") && r.Attempt != first) {
			continue
		}
		out, err := run.Log{Run: r}.Text()
		if err != nil {
			return err
		}
		errText, err := run.Log{Run: r, Stderr: true}.Text()
		if err != nil {
			return err
		}
		shown, outs, errs = append(shown, r), append(outs, out), append(errs, errText)
	}
	return runsPrinter(l.c).Logs(shown, outs, errs)
}

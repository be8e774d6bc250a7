package report

import (
	"fmt"
	"strings"
)

// Check statuses, worst last.
const (
	CheckOK   = "ok"
	CheckWarn = "warn"
	CheckFail = "fail"
)

// checkColors are the SGR codes of the statuses, as of the states: yellow
// for a look, red for a fix.
var checkColors = map[string]string{CheckOK: "32", CheckWarn: "33", CheckFail: "31"}

// Check is one finding of `queuectl doctor`: what was checked, how it
// stands, what was seen and, unless it is ok, the fix.
type Check struct {
	Name   string `json:"check"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Doctor prints each check on a line, `ok    home  /root/.queuectl is
// private`, with its fix on the next; JSON: an array of checks.
func (p Printer) Doctor(checks []Check) error {
	if p.JSON {
		if checks == nil {
			checks = []Check{}
		}
		return WriteJSON(p.Out, checks)
	}
	width := 0
	for _, c := range checks {
		width = max(width, len(c.Name))
	}
	var b strings.Builder
	for _, c := range checks {
		status := c.Status
		if code, ok := checkColors[c.Status]; ok && p.Color {
			status = "\x1b[" + code + "m" + status + "\x1b[0m"
		}
		fmt.Fprintf(&b, "%s%s  %-*s  %s\n", status, strings.Repeat(" ", 4-len(c.Status)), width, c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(&b, "      %-*s  fix: %s\n", width, "", c.Fix)
		}
	}
	_, err := fmt.Fprint(p.Out, b.String())
	return err
}

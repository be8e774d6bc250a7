package report

import "github.com/queuectl/queuectl/claim"

// stateColors are the SGR codes of the state words worth a glance: green is
// done, red needs a person, yellow will retry, cyan is running, magenta was
// stopped on purpose. Pending
// stays plain; it is the normal resting state.
var stateColors = map[claim.State]string{
	claim.Completed:  "32",
	claim.Dead:       "31",
	claim.Failed:     "33",
	claim.Processing: "36",
	claim.Canceled:   "35",
}

// state returns the word for a state (or a run outcome, which shares the
// words), coloured when p.Color is set. Tables measure width without the
// escape codes, so columns still line up.
func (p Printer) state(word string) string {
	code, ok := stateColors[claim.State(word)]
	if !p.Color || !ok {
		return word
	}
	return "\x1b[" + code + "m" + word + "\x1b[0m"
}

package report

import (
	"fmt"

	"github.com/queuectl/queuectl/claim"
)

type configObject struct {
	Key     string `json:"key"`
	Value   string `json:"value"`
	Default string `json:"default"`
	Help    string `json:"help"`
}

// Config renders `config list` and `config get` without a key: a table KEY, VALUE,
// DEFAULT, DESCRIPTION; JSON: an array of {key, value, default, help} in
// the order given.
func (p Printer) Config(vals []claim.ConfigValue) error {
	if p.JSON {
		out := make([]configObject, len(vals))
		for i, v := range vals {
			out[i] = configObject{Key: v.Key, Value: v.Value, Default: v.Default, Help: v.Help}
		}
		return WriteJSON(p.Out, out)
	}
	rows := make([][]string, len(vals))
	for i, v := range vals {
		rows[i] = []string{v.Key, v.Value, v.Default, v.Help}
	}
	return writeTable(p.Out, []string{"KEY", "VALUE", "DEFAULT", "DESCRIPTION"}, rows)
}

// ConfigValue renders `config get KEY`: the value alone on a line, for
// $(...); JSON: the one {key, value, default, help} object of v.
func (p Printer) ConfigValue(v claim.ConfigValue) error {
	if p.JSON {
		return WriteJSON(p.Out, configObject{Key: v.Key, Value: v.Value, Default: v.Default, Help: v.Help})
	}
	_, err := fmt.Fprintln(p.Out, v.Value)
	return err
}

package report

import (
	"testing"

	"github.com/queuectl/queuectl/claim"
)

func TestConfig(t *testing.T) {
	vals := make([]claim.ConfigValue, len(claim.ConfigKeys))
	for i, k := range claim.ConfigKeys {
		vals[i] = claim.ConfigValue{Key: k.Name, Value: k.Default, Default: k.Default, Help: k.Help}
	}
	vals[0].Value = "5"
	for _, json := range []bool{false, true} {
		name := map[bool]string{false: "text", true: "json"}[json]
		t.Run(name, func(t *testing.T) {
			p, buf := printer(json, false)
			if err := p.Config(vals); err != nil {
				t.Fatal(err)
			}
			golden(t, buf.Bytes())
		})
	}
}

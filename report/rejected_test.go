package report

import (
	"testing"
	"time"
)

func TestRejected(t *testing.T) {
	files := []RejectedFile{
		{Name: "typo.json", Size: 41, At: ago(3 * time.Minute),
			Reason: `typo.json: unknown field "comand"; known fields: id, command`,
			Fix:    "edit the file as said above, then move it back: mv rejected/typo.json spool/typo.json"},
		{Name: "odd\tname.json", Size: 0, At: ago(2 * time.Hour)},
	}
	for _, tt := range []struct {
		name  string
		files []RejectedFile
		json  bool
	}{
		{"text", files, false},
		{"json", files, true},
		{"empty json", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, buf := printer(tt.json, false)
			if err := p.Rejected(tt.files); err != nil {
				t.Fatal(err)
			}
			golden(t, buf.Bytes())
		})
	}
}

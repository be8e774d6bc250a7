package cli

import (
	"testing"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
)

// The clock check warns past a second off PostgreSQL's clock and fails past
// half a lease, where a live worker's jobs could be taken for lost.
func TestClockCheck(t *testing.T) {
	lease := 30 * time.Second
	for _, tc := range []struct {
		name   string
		server time.Time
		want   string
	}{
		{"sqlite", time.Time{}, report.CheckOK},
		{"in step", time.Now(), report.CheckOK},
		{"3s behind", time.Now().Add(-3 * time.Second), report.CheckWarn},
		{"20s ahead", time.Now().Add(20 * time.Second), report.CheckFail},
	} {
		c := clockCheck(claim.Health{ServerTime: tc.server}, lease)
		if c.Status != tc.want || (c.Status != report.CheckOK && c.Fix == "") {
			t.Errorf("%s: clockCheck = %+v, want %s with a fix unless ok", tc.name, c, tc.want)
		}
	}
}

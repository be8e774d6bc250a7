package report

import (
	"errors"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

func TestEnqueued(t *testing.T) {
	jobs := sampleJobs()
	created := claim.Result{Job: jobs[0], Outcome: claim.Created}
	skipped := claim.Result{Job: jobs[1], Outcome: claim.Skipped}
	redriven := claim.Result{Job: jobs[2], Outcome: claim.Redriven}
	refused := claim.Result{Err: errors.New("invalid input: no command")}
	all := []claim.Result{created, skipped, redriven, refused}
	tests := []struct {
		name   string
		rs     []claim.Result
		quiet  bool
		json   bool
		golden bool // compare with testdata, not want
		want   string
	}{
		{name: "text", rs: all, want: "Enqueued job nightly-db\nRe-drove dead job report\n"},
		{name: "quiet", rs: all, quiet: true, want: "nightly-db\nbuild-42\nreport\n"},
		{name: "skipped text", rs: []claim.Result{skipped}, want: ""},
		{name: "skipped quiet", rs: []claim.Result{skipped}, quiet: true, want: "build-42\n"},
		{name: "refused json", rs: []claim.Result{refused}, json: true, want: ""},
		{name: "refused many json", rs: []claim.Result{refused, refused}, json: true, want: "[]\n"},
		{name: "one json", rs: []claim.Result{created}, json: true, golden: true},
		{name: "many json", rs: all, json: true, golden: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, buf := printer(tt.json, false)
			if err := p.Enqueued(tt.rs, tt.quiet); err != nil {
				t.Fatal(err)
			}
			if tt.golden {
				golden(t, buf.Bytes())
			} else if buf.String() != tt.want {
				t.Errorf("Enqueued(%s, quiet=%v) = %q, want %q", tt.name, tt.quiet, buf.String(), tt.want)
			}
		})
	}
}

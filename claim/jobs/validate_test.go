package jobs_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim/jobs"
)

// TestRefusalQuotesAShortPartOfALongValue: a label (or id, queue, cwd)
// refused for its length is quoted by its start and its length, not
// repeated whole: a 5,000-character label came back whole in the error.
func TestRefusalQuotesAShortPartOfALongValue(t *testing.T) {
	label := strings.Repeat("é", 2500)
	err := (&jobs.NewJob{Command: "true", Label: label}).Validate()
	if !errors.Is(err, jobs.ErrInvalid) || len(err.Error()) > 300 || !strings.Contains(err.Error(), "(5000 bytes)") {
		t.Errorf("Validate(a 5000-byte label) = %v; want ErrInvalid quoting its start and its length", err)
	}
	if err := (&jobs.NewJob{Command: "true", Label: "bad\x01"}).Validate(); err == nil || !strings.Contains(err.Error(), `"bad\x01"`) {
		t.Errorf("Validate(a short bad label) = %v; want it quoted whole", err)
	}
}

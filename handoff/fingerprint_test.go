package handoff

import "testing"

// TestFingerprints: the fingerprints a client sends are those of the
// types it sends and reads, which a worker of the same build compares them
// with. A change to a job's fields changes them: write the new values.
func TestFingerprints(t *testing.T) {
	if got := enqueuePrint(); got != enqueueFingerprint {
		t.Errorf("enqueueFingerprint = %q, but the enqueue's types print %q: write that", enqueueFingerprint, got)
	}
	if got := followPrint(); got != followFingerprint {
		t.Errorf("followFingerprint = %q, but a follow's types print %q: write that", followFingerprint, got)
	}
}

package claim_test

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// idRule is the rule of SPEC §3 that ValidID spells out by hand.
var idRule = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func TestValidIDIsTheSpecRule(t *testing.T) {
	ids := []string{"", "a", "A", "0", ".", "-a", "_a", "a.b_c-d", "nightly-db", "a b", "a/b", "é",
		"a\n", strings.Repeat("a", 128), strings.Repeat("a", 129), "x" + strings.Repeat(".", 127)}
	const chars = "aZ09._-/ \x00é"
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		b := make([]byte, rng.IntN(6))
		for i := range b {
			b[i] = chars[rng.IntN(len(chars))]
		}
		ids = append(ids, string(b))
	}
	for _, id := range ids {
		if got, want := claim.ValidID(id), idRule.MatchString(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

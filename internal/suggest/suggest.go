// Package suggest finds the name a typo meant: of a command, a flag, a
// queue, a field of a job spec. It names only what is one or two edits
// away, or what the word typed starts: a suggestion far off misleads more
// than none.
package suggest

import "strings"

// Nearest returns the candidate closest to typed within a small edit
// distance (1 for short words, 2 from five letters on), or else one that
// typed starts; "" when none is that near. An empty word, which starts
// every candidate, is near none.
func Nearest(typed string, candidates []string) string {
	if typed == "" {
		return ""
	}
	best, bestD := "", 3
	limit := 1
	if len(typed) >= 5 {
		limit = 2
	}
	for _, c := range candidates {
		// One letter is one edit from every other letter: it gets only
		// the words it starts.
		if d := editDistance(typed, c); len(typed) > 1 && d <= limit && d < bestD {
			best, bestD = c, d
		}
	}
	if best != "" {
		return best
	}
	for _, c := range candidates {
		if len(c) > len(typed) && strings.HasPrefix(c, typed) {
			return c
		}
	}
	// A singular for a plural, three edits apart, alone or as the last
	// word: retry for retries or max-retries.
	if stem, ok := strings.CutSuffix(typed, "y"); ok && len(stem) >= 3 {
		for _, c := range candidates {
			if c == stem+"ies" || strings.HasSuffix(c, "-"+stem+"ies") {
				return c
			}
		}
	}
	return ""
}

// editDistance is the optimal string alignment distance of a and b: the
// insertions, deletions, substitutions and swaps of two neighbours that
// make one the other.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

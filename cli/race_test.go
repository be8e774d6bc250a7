//go:build race

package cli

// raceEnabled: built with -race, whose shadow memory multiplies a
// process's resident size.
const raceEnabled = true

//go:build race

package cli

// raceEnabled: this test binary is built with -race, whose shadow memory
// multiplies a process's resident size.
const raceEnabled = true

package cli

// The store engines linked into queuectl: claim.Open picks one by the
// location --db names.
import (
	_ "github.com/queuectl/queuectl/claim/sqlite"
)

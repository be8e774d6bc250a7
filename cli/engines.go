package cli

// The store engines linked into queuectl: claim.Open picks one by the
// location --db names (a file's path, or a postgres:// URL).
import (
	_ "github.com/queuectl/queuectl/claim/postgres"
	_ "github.com/queuectl/queuectl/claim/sqlite"
)

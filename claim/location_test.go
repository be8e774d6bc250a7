package claim_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queuectl/queuectl/claim"
)

// TestOpenRefusesOtherURLs: a URL of another database is no SQLite file.
func TestOpenRefusesOtherURLs(t *testing.T) {
	for _, loc := range []string{"mysql://u@h/db", "sqlserver://h/db", "redis://h"} {
		s, err := claim.Open(loc)
		if err == nil {
			s.Close()
		}
		if !errors.Is(err, claim.ErrInvalid) || !strings.Contains(err.Error(), "postgres://") {
			t.Errorf("Open(%q) = %v; want ErrInvalid naming what is taken", loc, err)
		}
		if _, err := os.Stat(filepath.Dir(loc)); err == nil && strings.Contains(loc, ":") {
			t.Errorf("Open(%q) made %s", loc, filepath.Dir(loc))
		}
	}
}

package private

import "testing"

// Users are named by number unless the program gives a lookup (the full
// program does; the front does not, and never prints these messages).
func TestNamesWithAndWithoutLookup(t *testing.T) {
	t.Cleanup(func() { LookupName = nil })
	LookupName = nil
	if got := UserName(4242); got != "uid 4242" {
		t.Errorf("UserName without a lookup = %q, want uid 4242", got)
	}
	if got := LoginName(4242); got != "4242" {
		t.Errorf("LoginName without a lookup = %q, want 4242", got)
	}
	LookupName = func(uid int) (string, bool) { return "bob smith", uid == 4242 }
	if got := UserName(4242); got != "uid 4242 (bob smith)" {
		t.Errorf("UserName = %q, want uid 4242 (bob smith)", got)
	}
	if got := LoginName(4242); got != "'bob smith'" {
		t.Errorf("LoginName = %q, want it quoted for a shell", got)
	}
	if got := UserName(7); got != "uid 7" {
		t.Errorf("UserName of an unknown uid = %q, want uid 7", got)
	}
}

package cli

import (
	"os/user"
	"strconv"

	"github.com/queuectl/queuectl/internal/private"
)

// Messages about a home's owner name users ("uid 1001 (bob)"): the full
// program looks names up with os/user, which package private leaves to it.
func init() { private.LookupName = lookupName }

func lookupName(uid int) (string, bool) {
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil {
		return "", false
	}
	return u.Username, true
}

package serve

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/queuectl/queuectl/internal/private"
)

// peerKey keys the user id of a connection's peer in its context.
type peerKey struct{}

// ConnContext records, for a server without a token, which local user
// opened the connection c (its peer's socket's owner, which the kernel
// reports and the peer cannot forge); give it to http.Server.ConnContext.
// Without a token, the loopback address is the only guard, and every user
// of the machine can reach it: ServeHTTP then answers only the user who
// runs serve, as the home's files are this user's alone.
func (s *Server) ConnContext(ctx context.Context, c net.Conn) context.Context {
	if s.token != "" {
		return ctx
	}
	local, lok := c.LocalAddr().(*net.TCPAddr)
	remote, rok := c.RemoteAddr().(*net.TCPAddr)
	if !lok || !rok {
		return ctx
	}
	if uid, ok := peerUID(local, remote); ok {
		return context.WithValue(ctx, peerKey{}, uid)
	}
	return ctx
}

// refuseOtherUser answers 403 and returns true when r came from another
// local user than the one serve runs as (ConnContext).
func (s *Server) refuseOtherUser(w http.ResponseWriter, r *http.Request) bool {
	uid, ok := r.Context().Value(peerKey{}).(int)
	if !ok || uid == os.Getuid() {
		return false
	}
	s.fail(w, r, http.StatusForbidden,
		fmt.Errorf("this connection is from %s, and without --token-file serve answers only %s, who runs it", private.UserName(uid), private.UserName(os.Getuid())),
		"ask its user for access, who can serve with --token-file and give you the token")
	return true
}

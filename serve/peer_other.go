//go:build !linux

package serve

import "net"

// peerUID is unknown off Linux: no socket table to read.
func peerUID(local, remote *net.TCPAddr) (int, bool) { return 0, false }

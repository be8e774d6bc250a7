package serve

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// peerUID returns the owner of the socket at the other end of the local
// TCP connection from remote to local, from the kernel's socket table
// (/proc/net/tcp, tcp6): the peer's line has its own address first.
func peerUID(local, remote *net.TCPAddr) (int, bool) {
	table, ip4 := "/proc/net/tcp6", remote.IP.To4()
	if ip4 != nil && local.IP.To4() != nil {
		table = "/proc/net/tcp"
	}
	f, err := os.Open(table)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	want := procAddr(remote, table) + " " + procAddr(local, table)
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid …
		fields := strings.Fields(lines.Text())
		if len(fields) < 8 || fields[1]+" "+fields[2] != want {
			continue
		}
		uid, err := strconv.Atoi(fields[7])
		return uid, err == nil
	}
	return 0, false
}

// procAddr writes a as /proc/net/tcp(6) does: the address as 32-bit words
// in the host's byte order, in hex, then the port.
func procAddr(a *net.TCPAddr, table string) string {
	ip := a.IP.To16()
	if table == "/proc/net/tcp" {
		ip = a.IP.To4()
	}
	var b strings.Builder
	for i := 0; i+4 <= len(ip); i += 4 {
		fmt.Fprintf(&b, "%08X", binary.NativeEndian.Uint32(ip[i:i+4]))
	}
	fmt.Fprintf(&b, ":%04X", a.Port)
	return b.String()
}

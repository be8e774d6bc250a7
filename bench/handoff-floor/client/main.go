// Command client hands its arguments, as one shell command, to the worker
// on $HANDOFF_SOCK, copies the job's output to stdout and exits with the
// job's exit status.
package main

import (
	"net"
	"os"
)

func main() {
	sock := os.Getenv("HANDOFF_SOCK")
	if sock == "" {
		sock = "handoff.sock"
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		os.Stderr.WriteString("client: " + err.Error() + "\n")
		os.Exit(125)
	}
	var line []byte
	for i, a := range os.Args[1:] {
		if i > 0 {
			line = append(line, ' ')
		}
		line = append(line, a...)
	}
	if _, err := c.Write(append(line, '\n')); err != nil {
		os.Exit(125)
	}
	buf := make([]byte, 65538)
	have := 0
	for {
		n, err := c.Read(buf[have:])
		have += n
		// consume whole frames: 'o' len16 bytes, or 'x' status
		for have > 0 {
			if buf[0] == 'x' {
				if have < 2 {
					break
				}
				os.Exit(int(buf[1]))
			}
			if have < 3 {
				break
			}
			l := 3 + (int(buf[1])<<8 | int(buf[2]))
			if have < l {
				break
			}
			os.Stdout.Write(buf[3:l])
			copy(buf, buf[l:have])
			have -= l
		}
		if err != nil {
			os.Stderr.WriteString("client: connection closed before the exit status\n")
			os.Exit(125)
		}
	}
}

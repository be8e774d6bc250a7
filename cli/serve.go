package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/serve"
	"github.com/urfave/cli/v2"
)

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the dashboard, the JSON API (/api/v1/…) and Prometheus metrics (/metrics)",
		Description: `Serves this home over HTTP until interrupted. It binds 127.0.0.1 by default;
any other address needs --token-file, whose contents every request must carry
(Authorization: Bearer TOKEN, or the dashboard's sign-in form).

Example: queuectl serve --addr 127.0.0.1:8377 --read-only`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8377", Usage: "listen on `HOST:PORT`"},
			&cli.BoolFlag{Name: "read-only", Usage: "offer no actions (no cancel, retry, purge…)"},
			&cli.StringFlag{Name: "token-file", Usage: "require the token in `FILE` (mode 0600) on every request"},
		},
		Action: func(c *cli.Context) error {
			// --read-only opens the store to read only: nothing is written
			// to it, not even a migration or the WAL guard's bookkeeping.
			open := claim.Open
			if c.Bool("read-only") {
				open = claim.OpenReadOnly
			}
			return around(func(c *cli.Context) (*home, error) {
				h, err := openHomeWith(c, false, open)
				if err != nil {
					return nil, err
				}
				return h.readConfig(c)
			}, serveHome)(c)
		},
	}
}

// serveHome is serve's action on the home opened.
func serveHome(c *cli.Context, h *home) error {
	if _, err := args(c, 0, 0); err != nil {
		return err
	}
	addr := c.String("addr")
	if !hostPort(addr) {
		return withHint(usagef("--addr %s is not HOST:PORT", addr), "queuectl serve --addr 127.0.0.1:8377")
	}
	token, err := readToken(c.String("token-file"))
	if err != nil {
		return err
	}
	if token == "" && !loopbackAddr(addr) {
		return withHint(usagef("--addr %s is reachable from other machines, and no --token-file guards it", addr),
			"serve on 127.0.0.1, or: umask 077; head -c 32 /dev/urandom | base64 > ~/.queuectl-token; queuectl serve --addr "+addr+" --token-file ~/.queuectl-token")
	}
	s, err := serve.New(serve.Options{Store: h.store, Home: h.dir, ReadOnly: c.Bool("read-only"), Token: token, Lease: h.config.Lease})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if hint := listenHint(addr, err); hint != "" {
			return withHint(err, hint)
		}
		return err
	}
	logf(c)("serving %s on http://%s/ (Ctrl-C stops)", h.dir, boundAddr(addr, ln.Addr()))
	return runServer(c.Context, s, ln)
}

// boundAddr is the address serve says it serves on: the host as given
// (Go reports 0.0.0.0 bound as [::]) with the port bound (for a port 0).
// An empty host, every address, is said as bound.
func boundAddr(given string, bound net.Addr) string {
	host, _, err := net.SplitHostPort(given)
	tcp, ok := bound.(*net.TCPAddr)
	if err != nil || host == "" || !ok {
		return bound.String()
	}
	return net.JoinHostPort(host, strconv.Itoa(tcp.Port))
}

// listenHint is the hint for addr, which net.Listen refused with err, or
// "" for none: whatever it suggests binds. A port taken: a free one near
// it. A port this user may not bind: why, and one it may. An address not
// of this machine: why, and no port of it, since none binds. Else any
// free port of the host, if one binds.
func listenHint(addr string, err error) string {
	host, service, _ := net.SplitHostPort(addr) // checked by hostPort
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return "pick another port: queuectl serve --addr " + freeAddrNear(addr)
	case errors.Is(err, syscall.EACCES):
		why := "this user may not bind port " + service
		if port, _ := net.LookupPort("tcp", service); port < 1024 {
			why += " (ports below 1024 need root or CAP_NET_BIND_SERVICE)"
		}
		return why + "; pick another port: queuectl serve --addr " + freeAddrNear(addr)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return host + " is not an address of this machine: give one of its own, 127.0.0.1 (this machine alone) or 0.0.0.0 (every interface)"
	}
	anyPort := net.JoinHostPort(host, "0")
	ln, err := net.Listen("tcp", anyPort)
	if err != nil {
		return ""
	}
	ln.Close()
	return "any free port binds: queuectl serve --addr " + anyPort
}

// freeAddrNear is addr with the first port above its own that is free
// now, to suggest when addr cannot be bound; with none free in the next
// hundred, port 0: any free port, which serve then says.
func freeAddrNear(addr string) string {
	host, service, _ := net.SplitHostPort(addr) // checked by hostPort
	port, _ := net.LookupPort("tcp", service)
	for p := port + 1; p <= min(port+100, 65535); p++ {
		try := net.JoinHostPort(host, strconv.Itoa(p))
		if ln, err := net.Listen("tcp", try); err == nil {
			ln.Close()
			return try
		}
	}
	return net.JoinHostPort(host, "0")
}

// runServer serves until ctx ends, then shuts down: open event streams
// end at once, other requests get five seconds to finish.
func runServer(ctx context.Context, s *serve.Server, ln net.Listener) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ConnContext: s.ConnContext}
	srv.RegisterOnShutdown(s.Close)
	stopped := make(chan error, 1)
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		stopped <- srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-stopped
}

// hostPort says whether addr is an address net.Listen takes: HOST:PORT
// with a port number or service name. Without it, a bare 127.0.0.1 was
// taken for an address open to other machines, and a port of 99999 for
// one to change.
func hostPort(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	return err == nil
}

// loopbackAddr reports whether addr listens on this machine's loopback
// interface only.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// readToken reads the token file: its one line, which must not be empty,
// from a file no one else can read.
func readToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", withHint(fmt.Errorf("token file: %w", err), "create it: umask 077; head -c 32 /dev/urandom | base64 > "+path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return "", withHint(usagef("token file %s is readable by others (mode %#o)", path, fi.Mode().Perm()), "chmod 600 "+path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("token file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" || strings.ContainsAny(token, "\r\n") {
		return "", withHint(usagef("token file %s must hold one non-empty line", path), "head -c 32 /dev/urandom | base64 > "+path)
	}
	return token, nil
}

// Package serve is queuectl over HTTP: a dashboard for people, a JSON API
// for scripts (/api/v1/…, the same objects as the CLI's --json, encoded by
// report) and Prometheus metrics (/metrics). It reads and acts through
// claim, spool and run, as the CLI does, and owns no state of its own
// beyond the counters of /metrics and, for an hour, what its last actions
// said for the pages they lead to (notices).
//
// Safety: the caller decides the address (the CLI binds 127.0.0.1 unless a
// token is given); with Token set every request must carry it, as a bearer
// header or the cookie the login form sets. Every POST carries the CSRF
// token, and requests whose Host is not the loopback name they were sent
// to are refused when no token is set (DNS rebinding), as are, on Linux,
// connections of another local user (ConnContext). Templates escape
// every value; logs are served as text/plain with nosniff, and only from
// the home's logs/ directory, never through a symlink.
package serve

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/run"
	"github.com/queuectl/queuectl/spool"
)

//go:embed templates assets
var files embed.FS

// Server serves one queuectl home. Build it with New; it is an
// http.Handler, safe for concurrent use.
type Server struct {
	store    *claim.Store
	home     string
	dirs     spool.Dirs
	logs     string
	readOnly bool
	token    string
	csrf     string
	now      func() time.Time
	lease    time.Duration
	host     string
	mux      *http.ServeMux
	pages    pages
	metrics  *metrics
	minutes  minuteCache
	overview *shared[[]byte] // what / shows, read once a second
	notices  notices         // what the last actions said, for the pages they lead to
	closing  chan struct{}   // closed by Close: event streams end
	close    sync.Once
}

// Options configures a Server.
type Options struct {
	Store *claim.Store
	Home  string // the queuectl home: spool/, rejected/, dead/, logs/ under it
	// ReadOnly offers no actions: every POST is refused with 403.
	ReadOnly bool
	// Token, when set, is required on every request (Authorization: Bearer,
	// or the cookie /login sets). Empty: no authentication, for loopback.
	Token string
	// Lease is the store's lease, to judge whether a worker on another host
	// is alive when its row does not say the lease it runs with (one an
	// older queuectl registered); a worker on this host is judged by its
	// pid.
	Lease time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// New returns a Server for o. Errors come from reading the embedded
// templates or the system's random source.
func New(o Options) (*Server, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	host := run.HostID()
	s := &Server{
		store: o.Store, home: o.Home, dirs: spool.DirsOf(o.Home), logs: filepath.Join(o.Home, "logs"),
		readOnly: o.ReadOnly, token: o.Token, csrf: hex.EncodeToString(secret), now: now,
		lease: o.Lease, host: host, mux: http.NewServeMux(), closing: make(chan struct{}),
	}
	var err error
	if s.pages, err = parsePages(); err != nil {
		return nil, err
	}
	s.metrics = newMetrics(s)
	s.overview = newShared(now, s.readOverview)
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	m := s.mux
	m.Handle("GET /assets/", http.FileServerFS(files))
	m.HandleFunc("GET /login", s.loginPage)
	m.HandleFunc("POST /login", s.login)

	m.HandleFunc("GET /{$}", s.overviewPage)
	m.HandleFunc("/", s.pageNotFound)
	m.HandleFunc("GET /jobs", s.jobsPage)
	m.HandleFunc("GET /jobs/{id}", s.jobPage)
	m.HandleFunc("GET /jobs/{id}/events", s.jobEvents)
	m.HandleFunc("GET /jobs/{id}/runs/{attempt}/{stream}", s.runLog)
	m.HandleFunc("GET /dlq", s.dlqPage)
	m.HandleFunc("GET /rejected", s.rejectedPage)
	m.HandleFunc("POST /jobs/{id}/{action}", s.jobAction)
	m.HandleFunc("POST /rejected/{name}/{action}", s.rejectedAction)
	m.HandleFunc("POST /queues/{name}/{action}", s.queueAction)
	m.HandleFunc("GET /schedules", s.schedulesPage)
	m.HandleFunc("POST /schedules/{name}/{action}", s.scheduleAction)

	for _, e := range apiRoutes {
		serve := func(w http.ResponseWriter, r *http.Request) { e.serve(s, w, r) }
		if e.method == http.MethodGet {
			serve = s.knownParams(e, serve)
		}
		m.HandleFunc(e.method+" "+e.path, serve)
	}
	m.HandleFunc("/api/", s.apiNotFound)

	m.Handle("GET /metrics", s.metrics)
}

// Close ends the event streams of open job pages, which would otherwise
// hold an http.Server's Shutdown until their browsers leave; give it to
// http.Server.RegisterOnShutdown. Requests after Close are still served.
func (s *Server) Close() {
	s.close.Do(func() { close(s.closing) })
}

// ServeHTTP checks the request's Host and token, sets the headers every
// response carries, and hands it to the route.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	if s.token == "" && !loopbackHost(r.Host) {
		s.fail(w, r, http.StatusForbidden, errors.New("host "+r.Host+" is not this machine's loopback address"),
			"open the dashboard as http://127.0.0.1:PORT/, or serve with --token-file")
		return
	}
	// /metrics (counts by queue and state: no command, output or
	// environment) stays open to every local user, as Prometheus runs as
	// a user of its own and scrapes without a token.
	if s.token == "" && r.URL.Path != "/metrics" && s.refuseOtherUser(w, r) {
		return
	}
	if s.token != "" && !s.authorized(r) && r.URL.Path != "/login" && !strings.HasPrefix(r.URL.Path, "/assets/") {
		if wantsHTML(r) {
			// Signed in, the browser comes back to the page it asked for.
			login := "/login"
			if r.URL.Path != "/" {
				login += "?" + url.Values{"next": {r.URL.RequestURI()}}.Encode()
			}
			http.Redirect(w, r, login, http.StatusSeeOther)
			return
		}
		h.Set("WWW-Authenticate", `Bearer realm="queuectl"`)
		s.fail(w, r, http.StatusUnauthorized, errors.New("missing or wrong token"),
			"send Authorization: Bearer followed by the contents of the --token-file")
		return
	}
	if r.Method == http.MethodPost && r.URL.Path != "/login" && s.acts(r) {
		if s.readOnly {
			s.fail(w, r, http.StatusForbidden, errors.New("this dashboard is read-only"), "serve without --read-only to act on jobs")
			return
		}
		if !s.csrfOK(r) {
			s.fail(w, r, http.StatusForbidden, errors.New("missing or wrong CSRF token"),
				"reload the page and try again; scripts send the header X-CSRF-Token from GET /api/v1/csrf")
			return
		}
	}
	s.mux.ServeHTTP(w, r)
	if r.Method == http.MethodPost {
		// An action shows at once, not a second later.
		s.overview.invalidate()
		s.metrics.scrape.invalidate()
	}
}

// acts reports whether a POST reaches an action: one that no route takes
// (a page, an API address that another method serves, no address at all)
// is answered by the catch-alls, 404 or 405 with Allow, whatever its CSRF
// token, since nothing is done for it.
func (s *Server) acts(r *http.Request) bool {
	_, pattern := s.mux.Handler(r)
	return pattern != "/" && pattern != "/api/"
}

// storeReads is how often the overview's and the scrape's shared reads
// have read the store.
func (s *Server) storeReads() int64 {
	return s.overview.loads.Load() + s.metrics.scrape.loads.Load()
}

// loopbackHost reports whether a Host header names this machine's loopback
// interface. A page that another name resolves to 127.0.0.1 (DNS rebinding)
// must not reach an unauthenticated dashboard.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

const cookieName = "queuectl_token"

func (s *Server) authorized(r *http.Request) bool {
	given := ""
	// The scheme's case is no matter (RFC 9110 §11.1).
	if scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		given = strings.TrimSpace(token)
	} else if c, err := r.Cookie(cookieName); err == nil {
		given = c.Value
	}
	return given != "" && subtle.ConstantTimeCompare([]byte(given), []byte(s.token)) == 1
}

// csrfOK reports whether a POST carries the CSRF token, as the form field
// csrf (pages) or the header X-CSRF-Token (scripts).
func (s *Server) csrfOK(r *http.Request) bool {
	given := r.Header.Get("X-CSRF-Token")
	if given == "" {
		given = r.PostFormValue("csrf")
	}
	return subtle.ConstantTimeCompare([]byte(given), []byte(s.csrf)) == 1
}

// wantsHTML tells a browser's navigation from a script's request.
func wantsHTML(r *http.Request) bool {
	return !strings.HasPrefix(r.URL.Path, "/api/") && r.URL.Path != "/metrics" &&
		strings.Contains(r.Header.Get("Accept"), "text/html")
}

// pageNotFound answers an address that is no page with the error
// page, whose navigation leads on, rather than a bare line of text.
func (s *Server) pageNotFound(w http.ResponseWriter, r *http.Request) {
	const pages = "the pages are / (overview), /jobs, /jobs/ID, /dlq, /rejected and /schedules; the API is under /api/v1/"
	if s.wrongMethod(w, r, pages) {
		return
	}
	s.fail(w, r, http.StatusNotFound, errors.New("no page "+r.URL.Path), pages)
}

// wrongMethod answers 405, with Allow, a request for an address that
// other methods serve, and reports whether it did: "no page /jobs" for a
// POST of /jobs named a page that is there.
func (s *Server) wrongMethod(w http.ResponseWriter, r *http.Request, hint string) bool {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		other := r.Clone(r.Context())
		other.Method = m
		if _, pattern := s.mux.Handler(other); m != r.Method && pattern != "/" && pattern != "/api/" &&
			(!strings.HasSuffix(pattern, "/{action}") || isAction(r.URL.Path)) {
			allow = append(allow, m)
		}
	}
	if len(allow) == 0 {
		return false
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	s.fail(w, r, http.StatusMethodNotAllowed, fmt.Errorf("%s takes %s, not %s", r.URL.Path, strings.Join(allow, " or "), r.Method), hint)
	return true
}

// isAction reports whether the last part of an address of the form
// [/api/v1]/KIND/NAME/ACTION is an action of KIND: /jobs/ID/runs is none,
// and a GET of it is no page, not a POST it should have been.
func isAction(p string) bool {
	parts := strings.Split(strings.Trim(strings.TrimPrefix(p, "/api/v1"), "/"), "/")
	if len(parts) != 3 {
		return false
	}
	return slices.Contains(actionsOf[parts[0]], parts[2])
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "login", loginView{Next: localPath(r.URL.Query().Get("next"), "")})
}

type loginView struct {
	Wrong bool
	Next  string // the page to go on to once signed in; "" for the overview
}

// login sets the token cookie from the form, so that a browser, which
// cannot send a bearer header on navigation, can read the pages, and
// leads on to the page the form was shown for.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	token := r.PostFormValue("token")
	next := localPath(r.PostFormValue("next"), "/")
	if s.token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(s.token)) != 1 {
		s.render(w, r, http.StatusUnauthorized, "login", loginView{Wrong: true, Next: next})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// ctx bounds a store read: a page never hangs on a locked database.
func (s *Server) ctx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), 10*time.Second)
}

package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/run"
)

// apiRoute is one endpoint of the API. A GET's params are the query
// parameters it takes: knownParams refuses any other with 400, so that a
// misspelt filter is told, never answered with every job.
type apiRoute struct {
	method, path string
	params       []string
	serve        func(*Server, http.ResponseWriter, *http.Request)
}

// apiRoutes are the API's endpoints, in the order the not-found hint
// lists them.
var apiRoutes = []apiRoute{
	{"GET", "/api/v1/status", nil, (*Server).apiStatus},
	{"GET", "/api/v1/jobs", filterParams, (*Server).apiJobs},
	{"GET", "/api/v1/jobs/{id}", nil, (*Server).apiJob},
	{"GET", "/api/v1/jobs/{id}/runs", nil, (*Server).apiRuns},
	{"GET", "/api/v1/jobs/{id}/runs/{attempt}/{stream}", nil, (*Server).runLog},
	{"GET", "/api/v1/jobs/{id}/logs", []string{"attempt", "all"}, (*Server).apiLogs},
	{"GET", "/api/v1/workers", nil, (*Server).apiWorkers},
	{"GET", "/api/v1/queues", nil, (*Server).apiQueues},
	{"GET", "/api/v1/dlq", pageParams, (*Server).apiDLQ},
	{"GET", "/api/v1/rejected", nil, (*Server).apiRejected},
	{"GET", "/api/v1/schedules", nil, (*Server).apiSchedules},
	{"GET", "/api/v1/csrf", nil, (*Server).apiCSRF},
	{"POST", "/api/v1/jobs/{id}/{action}", nil, (*Server).apiJobAction},
	{"POST", "/api/v1/queues/{name}/{action}", nil, (*Server).apiQueueAction},
	{"POST", "/api/v1/rejected/{name}/{action}", nil, (*Server).apiRejectedAction},
	{"POST", "/api/v1/schedules/{name}/{action}", nil, (*Server).apiScheduleAction},
}

// filterParams are the query parameters of a job listing (parseFilter).
var filterParams = []string{"state", "queue", "label", "reason", "prefix", "limit", "newest", "after"}

// pageParams are the query parameters of a listing of one kind of job
// (the dead letters): a page's size, order and start.
var pageParams = []string{"limit", "newest", "after"}

// shown is how a route's path reads in a message: /api/v1/jobs/ID.
var shown = strings.NewReplacer("{id}", "ID", "{attempt}", "N", "{stream}", "stdout|stderr", "{name}", "NAME", "{action}", "ACTION")

// knownParams serves GET requests with next when every query parameter is
// one e takes, and answers 400 naming the others.
func (s *Server) knownParams(e apiRoute, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var unknown []string
		for k, vs := range r.URL.Query() {
			if !slices.Contains(e.params, k) {
				unknown = append(unknown, strconv.Quote(k))
			} else if len(vs) > 1 && slices.ContainsFunc(vs, func(v string) bool { return v != vs[0] }) {
				// As list refuses --state given twice with two values.
				s.fail(w, r, http.StatusBadRequest, usagef("%s is given %d values (%s); give one", k, len(vs), strings.Join(vs, ", ")), "")
				return
			}
		}
		if len(unknown) == 0 {
			next(w, r)
			return
		}
		slices.Sort(unknown)
		what := "parameter"
		if len(unknown) > 1 {
			what += "s"
		}
		endpoint := e.method + " " + shown.Replace(e.path)
		hint := endpoint + " takes no parameters"
		if len(e.params) > 0 {
			hint = endpoint + " takes " + strings.Join(e.params, ", ") + "; see " + apiDocs
		}
		s.fail(w, r, http.StatusBadRequest, usagef("unknown %s %s of %s", what, strings.Join(unknown, ", "), endpoint), hint)
	}
}

// apiDocs is where the API is documented, wherever queuectl came from: in
// docs/ beside README.md in a checkout and a release tarball, and where
// the .deb installs them (tools/dist.sh).
const apiDocs = "docs/dashboard.md beside README.md (from the .deb: /usr/share/doc/queuectl/docs/dashboard.md)"

// endpoints is the not-found hint: every endpoint of the API.
func endpoints() string {
	var gets, posts []string
	for _, e := range apiRoutes {
		if e.method == http.MethodGet {
			gets = append(gets, shown.Replace(e.path))
		} else {
			posts = append(posts, shown.Replace(e.path))
		}
	}
	return "endpoints: GET " + strings.Join(gets, ", ") + "; POST " + strings.Join(posts, ", ") + "; see " + apiDocs
}

// errorObject is the JSON body of every API error: what went wrong and,
// where the fix is known, the fix — the CLI's `error:` and `hint:` lines.
type errorObject struct {
	Error string `json:"error"`
	Hint  string `json:"hint,omitempty"`
}

// statusOf maps an error to the HTTP status matching the CLI's exit code:
// 400 for 2 (invalid input), 404 for 3 (no such job), 409 for 4 (conflict).
func statusOf(err error) int {
	switch {
	case errors.Is(err, claim.ErrInvalid), errors.Is(err, errUsage):
		return http.StatusBadRequest
	case errors.Is(err, claim.ErrNotFound), errors.Is(err, errNoAction):
		return http.StatusNotFound
	case errors.Is(err, claim.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, claim.ErrUnavailable):
		return http.StatusServiceUnavailable
	case errors.As(err, new(*logRefused)):
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}

// errNoAction marks a POST of an action there is none of: no endpoint, so
// 404, though the job, queue, file or schedule it names may well be there.
var errNoAction = errors.New("no such action")

// errUsage marks a bad request parameter (the CLI's exit 2).
var errUsage = errors.New("bad request")

func usagef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

// hintFor is the fix for the common errors: where to look, in the API and
// in the CLI, for what the request named.
func hintFor(err error, r *http.Request) string {
	var h interface{ Hint() string }
	if errors.Is(err, claim.ErrUnavailable) && errors.As(err, &h) {
		return h.Hint() // what to check, as the CLI says it
	}
	// A page's error names pages; the API's, its addresses.
	where := func(page, api string) string {
		if strings.HasPrefix(r.URL.Path, "/api/") {
			return api
		}
		return page
	}
	what, list := "jobs", where("/jobs", "GET /api/v1/jobs")+" (queuectl list)"
	switch p := strings.TrimPrefix(r.URL.Path, "/api/v1"); {
	case strings.HasPrefix(p, "/rejected"):
		what, list = "rejected files", where("/rejected", "GET /api/v1/rejected")+" (queuectl rejected list)"
	case strings.HasPrefix(p, "/schedules"):
		what, list = "schedules", where("/schedules", "GET /api/v1/schedules")+" (queuectl schedule list)"
	case strings.HasPrefix(p, "/queues"):
		what, list = "queues", where("/", "GET /api/v1/queues")+" (queuectl queue list)"
	}
	var noRun noRunError
	var ambiguous claim.AmbiguousError
	switch {
	case errors.As(err, &noRun):
		return "its runs: GET /api/v1/jobs/" + noRun.id + "/runs (queuectl show " + noRun.id + ")"
	case errors.As(err, &ambiguous):
		return "the jobs whose ids start so: " + where("/jobs", "GET /api/v1/jobs") + "?prefix=" + url.QueryEscape(ambiguous.Ref)
	case errors.Is(err, errNoAction):
		return "the actions are named above; see " + apiDocs
	case errors.Is(err, claim.ErrNotFound):
		return "the " + what + " there are: " + list
	case errors.Is(err, claim.ErrConflict) && what == "jobs":
		return "see the job's state: GET /api/v1/jobs/" + r.PathValue("id") + " (queuectl show " + r.PathValue("id") + ")"
	case errors.Is(err, claim.ErrConflict) && what == "queues":
		// the one refusal of a queue action: a queue resumed alone
		// while every queue is paused
		return "resume every queue: POST /api/v1/queues/*/resume (queuectl resume)"
	case errors.Is(err, claim.ErrInvalid), errors.Is(err, errUsage):
		return "see the parameters in " + apiDocs
	}
	return ""
}

// writeJSON sends v with report's encoder: the bytes the CLI's --json prints.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	report.WriteJSON(w, v) // a write error means the client went away
}

// fail answers a request with err: JSON {"error", "hint"} for scripts, an
// error page for a browser.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, err error, hint string) {
	if hint == "" {
		hint = hintFor(err, r)
	}
	if wantsHTML(r) {
		s.render(w, r, status, "error", errorView{Status: status, Error: err.Error(), Hint: hint})
		return
	}
	writeJSON(w, status, errorObject{Error: err.Error(), Hint: hint})
}

// failErr answers with err and the status its kind calls for.
func (s *Server) failErr(w http.ResponseWriter, r *http.Request, err error) {
	s.fail(w, r, statusOf(err), err, "")
}

func (s *Server) apiStatus(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	st, err := s.status(ctx)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, report.StatusJSON(st))
}

// apiJobs is `list --json` with ?state, ?queue, ?label, ?reason, ?prefix, ?limit (default
// and most 1000), ?newest and ?after (a job's seq, or its id with
// ?prefix). The next page's address is in the Link header (rel="next").
func (s *Server) apiJobs(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	f, err := parseFilter(r.URL.Query(), 1000, 1000)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	jobs, err := s.store.List(ctx, f)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	if len(jobs) == f.Limit {
		w.Header().Set("Link", "<"+nextURL("/api/v1/jobs", r.URL.Query(), f, jobs[len(jobs)-1])+`>; rel="next"`)
	}
	writeJSON(w, http.StatusOK, report.JobsJSON(jobs))
}

// parseFilter reads a job listing's query parameters. limit is the default
// page size and most the largest one allowed.
func parseFilter(q url.Values, limit, most int) (claim.Filter, error) {
	f := claim.Filter{Queue: q.Get("queue"), Label: q.Get("label"), Reason: q.Get("reason"), IDPrefix: q.Get("prefix"), Limit: limit}
	if v := q.Get("newest"); v != "" {
		var err error
		if f.Newest, err = strconv.ParseBool(v); err != nil {
			return f, usagef("newest %q: want 1 or 0 (true or false)", v)
		}
	}
	if st := q.Get("state"); st != "" {
		var err error
		if f.State, err = claim.ParseState(st); err != nil {
			return f, err
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > most {
			return f, usagef("limit %q: want a number from 1 to %d", v, most)
		}
		f.Limit = n
	}
	if v := q.Get("after"); v != "" {
		if f.IDPrefix != "" {
			f.AfterID = v
		} else {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				return f, usagef("after %q: want the seq of a job from the previous page", v)
			}
			f.After = n
		}
	}
	return f, nil
}

// nextURL is the address of the page after the one that ended with last.
func nextURL(path string, q url.Values, f claim.Filter, last claim.Job) string {
	next := url.Values{}
	for k, v := range q {
		next[k] = v
	}
	next.Del("before")
	if f.IDPrefix != "" {
		next.Set("after", last.ID)
	} else {
		next.Set("after", strconv.FormatInt(last.Seq, 10))
	}
	return path + "?" + next.Encode()
}

// apiJob is `show --json`: the job and its runs.
func (s *Server) apiJob(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	j, runs, err := s.jobWithTails(ctx, r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.printer().ShowJSON(j, runs))
}

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	_, runs, err := s.jobWithTails(ctx, r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.printer().RunsJSON(runs))
}

// apiLogs is `logs --json ID`: the job's latest run, ?attempt=N's or,
// with ?all, every run, each with the text of both its streams, read as
// the raw logs are (runLog: this home's logs/, else the tail kept with the
// run).
func (s *Server) apiLogs(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	q := r.URL.Query()
	var all bool
	var err error
	if q.Has("all") {
		if all, err = strconv.ParseBool(q.Get("all")); err != nil {
			s.failErr(w, r, usagef("all %q: want 1 or 0 (true or false)", q.Get("all")))
			return
		}
	}
	attempt := 0
	if q.Has("attempt") {
		if attempt, err = strconv.Atoi(q.Get("attempt")); err != nil || attempt < 1 {
			s.failErr(w, r, usagef("attempt %q: want a run number, from 1", q.Get("attempt")))
			return
		}
		if all {
			s.failErr(w, r, usagef("give all or attempt, not both"))
			return
		}
	}
	j, runs, err := s.jobWithTails(ctx, r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	shown := runs
	switch {
	case len(runs) == 0 && q.Has("attempt"): // 404, as logs' exit 3 for a job that has not run
		s.failErr(w, r, noRunError{j.ID, attempt, 0})
		return
	case q.Has("attempt"):
		i := slices.IndexFunc(runs, func(run claim.Run) bool { return run.Attempt == attempt })
		if i < 0 { // 404, as logs' exit 3
			s.fail(w, r, http.StatusNotFound, fmt.Errorf("job %s has runs %d to %d, not %d", j.ID, runs[0].Attempt,
				runs[len(runs)-1].Attempt, attempt), "its runs: GET /api/v1/jobs/"+j.ID+"/runs (queuectl show "+j.ID+")")
			return
		}
		shown = runs[i : i+1]
	case !all && len(runs) > 0:
		shown = runs[len(runs)-1:]
	}
	outs, errs := make([]string, len(shown)), make([]string, len(shown))
	for i, run := range shown {
		if outs[i], err = s.logText(ctx, run, "stdout"); err == nil {
			errs[i], err = s.logText(ctx, run, "stderr")
		}
		if err != nil {
			s.failErr(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, s.printer().LoggedRuns(shown, outs, errs))
}

// jobWithTails is job with the bytes of the runs' tails, for show's JSON:
// it carries those whose files are not here (Server.fromTail).
func (s *Server) jobWithTails(ctx context.Context, ref string) (claim.Job, []claim.Run, error) {
	j, err := s.get(ctx, ref)
	if err != nil {
		return j, nil, err
	}
	runs, err := s.store.RunsWithTails(ctx, j.ID)
	return j, runs, err
}

// job reads a job and its runs; ErrNotFound when there is none.
func (s *Server) job(ctx context.Context, ref string) (claim.Job, []claim.Run, error) {
	j, err := s.get(ctx, ref)
	if err != nil {
		return j, nil, err
	}
	runs, err := s.store.Runs(ctx, j.ID)
	return j, runs, err
}

// get reads the job ref names: an id, a unique prefix of one, or @last,
// as the CLI takes them (claim.Store.Resolve).
func (s *Server) get(ctx context.Context, ref string) (claim.Job, error) {
	j, err := s.store.Get(ctx, ref)
	if !errors.Is(err, claim.ErrNotFound) {
		return j, err // the id itself, the common case: one read
	}
	id, err := s.store.Resolve(ctx, ref)
	if err != nil {
		return claim.Job{}, err
	}
	return s.store.Get(ctx, id)
}

func (s *Server) apiWorkers(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	ws, err := s.liveWorkers(ctx)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, report.WorkersJSON(ws))
}

func (s *Server) apiQueues(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	counts, err := s.store.QueueCounts(ctx)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	limits, err := s.store.Queues(ctx)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	paused, err := s.store.Paused(ctx)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, report.QueuesJSON(counts, limits, paused))
}

// apiDLQ is `dlq list --json`.
func (s *Server) apiDLQ(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	// Paged as /api/v1/jobs: a store with thousands of dead jobs
	// answered them all at once, megabytes read with their stderr.
	f, err := parseFilter(r.URL.Query(), 1000, 1000)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	f.State = claim.Dead
	jobs, err := s.store.List(ctx, f)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	dead, err := s.deadJobs(ctx, jobs)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	if len(jobs) == f.Limit {
		w.Header().Set("Link", "<"+nextURL("/api/v1/dlq", r.URL.Query(), f, jobs[len(jobs)-1])+`>; rel="next"`)
	}
	writeJSON(w, http.StatusOK, report.DeadJobsJSON(dead))
}

// deadJobs gives each dead job the last line of its latest run's stderr.
func (s *Server) deadJobs(ctx context.Context, jobs []claim.Job) ([]report.DeadJob, error) {
	lines, err := run.LastStderrLines(ctx, s.store, jobs)
	if err != nil {
		return nil, err
	}
	return report.DeadJobsOf(jobs, lines), nil
}

// apiCSRF gives scripts the token their POSTs carry. Another site's page
// cannot read it: the response has no CORS headers.
func (s *Server) apiCSRF(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"csrf": s.csrf})
}

func (s *Server) apiNotFound(w http.ResponseWriter, r *http.Request) {
	if s.wrongMethod(w, r, endpoints()) {
		return
	}
	s.fail(w, r, http.StatusNotFound, fmt.Errorf("no API endpoint %s %s", r.Method, r.URL.Path), endpoints())
}

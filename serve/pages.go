package serve

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
)

type queueRow struct {
	Queue  string
	Counts []int // in claim.States order
	Total  int
	Paused bool
}

type workerRow struct {
	claim.WorkerInfo
	Queues    string
	Started   string
	Heartbeat string
}

type overviewView struct {
	States       []tile
	Total        int
	Running      []runningRow
	Queues       []queueRow
	Workers      []workerRow
	Slots, Busy  int
	SpoolWaiting int
	Rejected     int
	AllPaused    bool // every queue is paused (pause without --queue)
	Chart        chart
	Attention    []jobRow
}

func (overviewView) title() string { return "Overview" }

func (s *Server) overviewPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	page, err := s.overview.get(ctx)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writePage(w, http.StatusOK, page)
}

// readOverview reads and renders the overview. Concurrent requests share
// one a second (s.overview), rendering included: the page is dated with
// the time of its read.
func (s *Server) readOverview(ctx context.Context) ([]byte, error) {
	v, err := s.overviewData(ctx)
	if err != nil {
		return nil, err
	}
	return s.page("overview", v, nil)
}

func (s *Server) overviewData(ctx context.Context) (overviewView, error) {
	st, err := s.status(ctx)
	if err != nil {
		return overviewView{}, err
	}
	now := s.now()
	perMinute, err := s.runsPerMinute(ctx, now)
	if err != nil {
		return overviewView{}, err
	}
	var attention []claim.Job
	for _, state := range []claim.State{claim.Dead, claim.Failed} {
		jobs, err := s.store.List(ctx, claim.Filter{State: state, Newest: true, Limit: 5})
		if err != nil {
			return overviewView{}, err
		}
		attention = append(attention, jobs...)
	}
	sort.SliceStable(attention, func(i, j int) bool { return attention[i].UpdatedAt.After(attention[j].UpdatedAt) })
	v := overviewView{SpoolWaiting: st.SpoolWaiting, Rejected: st.Rejected, Busy: st.Busy,
		Chart: newChart(perMinute, now), Attention: s.jobRows(attention[:min(len(attention), 8)])}
	v.States, v.Total = stateTiles(st)
	if v.Running, err = s.running(ctx); err != nil {
		return overviewView{}, err
	}
	v.Queues = queueRows(st.QueueCounts, st.Paused)
	v.AllPaused = slices.Contains(st.Paused, claim.AllQueues)
	p := s.printer()
	for _, w := range st.Workers {
		queues := "every queue"
		if len(w.Queues) > 0 {
			queues = joinComma(w.Queues)
		}
		v.Workers = append(v.Workers, workerRow{WorkerInfo: w, Queues: queues, Started: p.Age(w.StartedAt), Heartbeat: p.Age(w.HeartbeatAt)})
		v.Slots += w.Slots
	}
	return v, nil
}

// queueRows lists every queue with jobs, and every queue paused by name.
func queueRows(byQueue map[string]map[claim.State]int, paused []string) []queueRow {
	var rows []queueRow
	for _, q := range paused {
		if _, ok := byQueue[q]; !ok && q != claim.AllQueues {
			byQueue[q] = nil
		}
	}
	for q, counts := range byQueue {
		row := queueRow{Queue: q, Paused: isPaused(paused, q)}
		for _, st := range claim.States {
			row.Counts = append(row.Counts, counts[st])
			row.Total += counts[st]
		}
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Queue < rows[j].Queue })
	return rows
}

func joinComma(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}

// jobRow is a job as a table row shows it, in the CLI's words: Retry says
// when a failed job runs again ("" for any other), RunningFor how long a
// processing one has run ("-" for any other).
type jobRow struct {
	claim.Job
	Attempts   string
	Updated    string
	Retry      string
	RunningFor string
}

func (s *Server) jobRows(jobs []claim.Job) []jobRow {
	p := s.printer()
	rows := make([]jobRow, len(jobs))
	for i, j := range jobs {
		rows[i] = jobRow{Job: j, Attempts: report.Attempts(j), Updated: p.Age(j.UpdatedAt), RunningFor: p.RunningFor(j)}
		if j.State == claim.Failed {
			rows[i].Retry = p.Reason(j)
		}
	}
	return rows
}

type jobsView struct {
	State, Queue, Label, Reason, Prefix string
	Queues                              []string
	Reasons                             []string // what Reason may be
	Jobs                                []jobRow
	// Newer, Older are the neighbouring pages' URLs; "" when none. Whole
	// URLs: a query string put after "/jobs?" in the template is escaped
	// as one query value, its = and & with it, and led back to page one.
	Newer, Older string
	Total        int    // jobs that match, from the counts; -1 with a prefix, a label or a reason
	Invalid      string // why no job id can start with Prefix; "" when one can
}

func (jobsView) title() string { return "Jobs" }

// api is the API's first page of the jobs the page shows, newest first.
func (v jobsView) api() string {
	q := url.Values{"newest": {"1"}}
	for k, val := range map[string]string{"state": v.State, "queue": v.Queue, "label": v.Label, "reason": v.Reason, "prefix": v.Prefix} {
		if val != "" {
			q.Set(k, val)
		}
	}
	return "/api/v1/jobs?" + q.Encode()
}

const pageSize = 50

// jobsPage lists jobs newest first, 50 a page, with keyset links: "older"
// continues after the page's last job, "newer" before its first, so every
// page costs one indexed read however deep it is.
func (s *Server) jobsPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	q := r.URL.Query()
	v := jobsView{State: q.Get("state"), Queue: q.Get("queue"), Label: q.Get("label"), Reason: q.Get("reason"), Prefix: q.Get("prefix"),
		Reasons: append([]string{claim.ReasonRunnable}, claim.PendingReasons...)}
	q.Del("newest")
	q.Del("limit")
	before := q.Get("before")
	q.Del("before")
	f, err := parseFilter(q, pageSize+1, pageSize+1)
	if err == nil && before != "" {
		// The page before: the next pageSize+1 jobs in the other order.
		q.Set("after", before)
		f, err = parseFilter(q, pageSize+1, pageSize+1)
	} else {
		f.Newest = true
	}
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	status := http.StatusOK
	jobs, err := s.store.List(ctx, f)
	if errors.Is(err, claim.ErrInvalid) && f.IDPrefix != "" {
		// Typed into the search: said beside the form, which keeps it.
		status, v.Invalid, err = http.StatusBadRequest, err.Error(), nil
	}
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	more := len(jobs) > pageSize
	jobs = jobs[:min(len(jobs), pageSize)]
	if !f.Newest {
		slices.Reverse(jobs)
	}
	if len(jobs) > 0 {
		base := r.URL.Query()
		base.Del("after")
		base.Del("before")
		cursor := func(j claim.Job) string {
			if f.IDPrefix != "" {
				return j.ID
			}
			return strconv.FormatInt(j.Seq, 10)
		}
		// Newest first: "older" follows the last row, "newer" precedes the first.
		if (f.Newest && more) || !f.Newest {
			base.Set("after", cursor(jobs[len(jobs)-1]))
			v.Older = "/jobs?" + base.Encode()
			base.Del("after")
		}
		if (f.Newest && (f.After != 0 || f.AfterID != "")) || (!f.Newest && more) {
			base.Set("before", cursor(jobs[0]))
			v.Newer = "/jobs?" + base.Encode()
		}
	}
	v.Jobs = s.jobRows(jobs)
	counts, err := s.store.QueueCounts(ctx)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	v.Total = -1
	if f.IDPrefix == "" && f.Label == "" && f.Reason == "" {
		v.Total = 0
	}
	for q, c := range counts {
		v.Queues = append(v.Queues, q)
		for st, n := range c {
			if v.Total >= 0 && (f.Queue == "" || f.Queue == q) && (f.State == "" || f.State == st) {
				v.Total += n
			}
		}
	}
	sort.Strings(v.Queues)
	s.render(w, r, status, "jobs", v)
}

type dlqView struct {
	Jobs  []deadRow
	Total int // dead jobs in all; the page shows the newest dlqPage
}

type deadRow struct {
	jobRow
	Died       string
	LastStderr string // the last line of its latest run's stderr
}

func (dlqView) title() string { return "Dead letters" }
func (dlqView) api() string   { return "/api/v1/dlq?newest=1" }

// dlqPage is how many dead jobs the page shows, newest first; the jobs
// page pages through all of them.
const dlqPage = 100

func (s *Server) dlqPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	jobs, err := s.store.List(ctx, claim.Filter{State: claim.Dead, Newest: true, Limit: dlqPage})
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	counts, err := s.store.Counts(ctx)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	dead, err := s.deadJobs(ctx, jobs)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	p := s.printer()
	v := dlqView{Total: counts[claim.Dead]}
	for i, row := range s.jobRows(jobs) {
		died := jobs[i].FinishedAt
		if died.IsZero() {
			died = jobs[i].UpdatedAt
		}
		v.Jobs = append(v.Jobs, deadRow{jobRow: row, Died: p.Age(died), LastStderr: dead[i].LastStderr})
	}
	s.render(w, r, http.StatusOK, "dlq", v)
}

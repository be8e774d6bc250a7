package serve

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/run"
	"github.com/queuectl/queuectl/spool"
)

// action is a button on a job: what it does, in the CLI's words.
type action struct {
	Name    string // the URL's last element
	Label   string
	Confirm string // asked before doing it, when it cannot be undone
	Danger  bool
}

// jobActions are the actions on one job, each the CLI command's own calls.
var jobActions = map[string]struct {
	do   func(s *Server, ctx context.Context, id string) (done, error)
	when []claim.State
	action
}{
	"cancel": {(*Server).cancel, []claim.State{claim.Pending, claim.Failed, claim.Processing, claim.Held},
		action{Name: "cancel", Label: "Cancel", Confirm: "Cancel this job for good? A running job's processes are stopped.", Danger: true}},
	"hold": {(*Server).hold, []claim.State{claim.Pending, claim.Failed},
		action{Name: "hold", Label: "Hold"}},
	"release": {(*Server).release, []claim.State{claim.Held},
		action{Name: "release", Label: "Release"}},
	"retry": {(*Server).retry, []claim.State{claim.Dead},
		action{Name: "retry", Label: "Retry"}},
	"restart": {(*Server).restart, []claim.State{claim.Completed, claim.Canceled},
		action{Name: "restart", Label: "Restart"}},
	"rm": {(*Server).remove, []claim.State{claim.Completed, claim.Canceled},
		action{Name: "rm", Label: "Remove", Confirm: "Forget this job, its runs and logs for good?", Danger: true}},
	"purge": {(*Server).purge, []claim.State{claim.Dead},
		action{Name: "purge", Label: "Purge", Confirm: "Delete this dead job, its runs and logs for good?", Danger: true}},
}

// done is what an action did besides its change to the job: gone, the
// job no longer exists; rearmed, what a retry or restart did to the jobs
// that died with it (what `dlq retry` and `restart` say on stderr); died,
// the jobs that died with a job canceled (what `cancel` says on stderr).
type done struct {
	gone    bool
	rearmed claim.Rearmed
	died    []claim.Job
}

// shownDied is how many of the jobs that died with a job canceled the
// page names; it counts the rest (report.DiedLines).
const shownDied = 10

// actionOrder is the order of the buttons.
var actionOrder = []string{"hold", "release", "cancel", "retry", "restart", "purge", "rm"}

// actionsOf names the actions a POST does on each kind of address
// ([/api/v1]/KIND/NAME/ACTION), in the order a refusal lists them.
var actionsOf = map[string][]string{"jobs": actionOrder, "queues": {"pause", "resume"},
	"rejected": {"retry", "purge"}, "schedules": {"pause", "resume"}}

// noAction is the errNoAction of action on kind, with kind's actions.
func noAction(kind, action string) error {
	what := kind
	if kind == "rejected" {
		what = "rejected files"
	}
	return fmt.Errorf("%w: %q on %s (actions: %s)", errNoAction, action, what, strings.Join(actionsOf[kind], ", "))
}

// actionsFor lists the actions that apply to j now; none when read-only.
func (s *Server) actionsFor(j claim.Job) []action {
	if s.readOnly {
		return nil
	}
	var out []action
	for _, name := range actionOrder {
		a := jobActions[name]
		for _, st := range a.when {
			if j.State == st {
				out = append(out, a.action)
			}
		}
	}
	return out
}

// hold is `hold ID`: the claim skips the job until it is released.
func (s *Server) hold(ctx context.Context, id string) (done, error) {
	_, _, err := s.store.Hold(ctx, id)
	return done{}, err
}

// release is `release ID`: the held job is pending or failed again.
func (s *Server) release(ctx context.Context, id string) (done, error) {
	_, err := s.store.ReleaseHeld(ctx, id)
	return done{}, err
}

// retry is `dlq retry ID`: pending again, attempts back to 0, its dead/
// file removed, and those of the jobs its death made dead, pending again
// with it.
func (s *Server) retry(ctx context.Context, id string) (done, error) {
	_, r, err := s.store.RetryChain(ctx, id)
	if err != nil {
		return done{}, err
	}
	return done{rearmed: r}, spool.SyncDead(ctx, s.store, s.dirs.Dead)
}

// cancel is `cancel ID`: a pending or failed job is canceled at once, and
// the jobs waiting for it die with it; a running one is marked, and its
// worker stops its processes (the job page follows it to canceled) and
// ends the jobs waiting for it then, as it does for `cancel`.
func (s *Server) cancel(ctx context.Context, id string) (done, error) {
	_, died, _, err := s.store.Cancel(ctx, id)
	if err != nil {
		return done{}, err
	}
	// Jobs that waited for it (after) died with it: their dead/ files, as
	// the CLI writes them.
	for _, j := range died {
		runs, err := s.store.Runs(ctx, j.ID)
		if err == nil {
			err = spool.WriteDead(s.dirs.Dead, j, runs)
		}
		if err != nil {
			return done{}, err
		}
	}
	return done{died: died}, nil
}

// restart is `restart ID`: pending again, as new runs; a dead job's dead/
// file removed, and those of the jobs its end made dead, pending again
// with it.
func (s *Server) restart(ctx context.Context, id string) (done, error) {
	_, r, err := s.store.RestartChain(ctx, id)
	if err != nil {
		return done{}, err
	}
	return done{rearmed: r}, spool.SyncDead(ctx, s.store, s.dirs.Dead)
}

// remove is `rm ID`: the finished job, its runs, logs and dead/ file.
func (s *Server) remove(ctx context.Context, id string) (done, error) {
	if err := s.store.Remove(ctx, id); err != nil {
		return done{}, err
	}
	if err := spool.RemoveDead(s.dirs.Dead, id); err != nil {
		return done{gone: true}, err
	}
	return done{gone: true}, run.RemoveLogs(s.logs, id)
}

// purge is `dlq purge ID`: the dead job, its runs, logs and dead/ file.
func (s *Server) purge(ctx context.Context, id string) (done, error) {
	if err := s.store.Purge(ctx, id); err != nil {
		return done{}, err
	}
	if err := spool.RemoveDead(s.dirs.Dead, id); err != nil {
		return done{gone: true}, err
	}
	return done{gone: true}, run.RemoveLogs(s.logs, id)
}

// doJobAction does action name on the job ref names (an id, a unique
// prefix of one, or @last, as in the CLI) and returns the job's id.
func (s *Server) doJobAction(ctx context.Context, name, ref string) (id string, d done, err error) {
	a, ok := jobActions[name]
	if !ok {
		return ref, done{}, noAction("jobs", name)
	}
	if id, err = s.store.Resolve(ctx, ref); err != nil {
		return ref, done{}, err
	}
	d, err = a.do(s, ctx, id)
	return id, d, err
}

// jobAction is a button's POST: the action, then back to the job's page
// (or to where the form says, for a job that is gone), which says, after
// a retry or restart, what came back with the job, and after a cancel,
// what died with it, as the CLI says it.
func (s *Server) jobAction(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	id, d, err := s.doJobAction(ctx, r.PathValue("action"), r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	back := "/jobs/" + url.PathEscape(id)
	if next := r.PostFormValue("next"); d.gone || next != "" {
		back = localPath(next, "/jobs")
	}
	lines := append(s.rearmedLines(ctx, id, d.rearmed), report.DiedLines(id, d.died, shownDied)...)
	back = s.notices.add(back, lines, s.now())
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// rearmedLines is what `dlq retry` and `restart` say on stderr of the jobs
// that came back with id, or stay dead (report.RearmedLines); a unique_key
// it cannot read is left out of its line, as the CLI leaves it.
func (s *Server) rearmedLines(ctx context.Context, id string, r claim.Rearmed) []string {
	keys := map[string]string{}
	for _, left := range r.Left {
		if j, err := s.store.Get(ctx, left); err == nil {
			keys[left] = j.UniqueKey
		}
	}
	return report.RearmedLines(id, r, keys)
}

// localPath returns p when it is a path on this server, else def: a form
// must not send the browser elsewhere. Browsers drop TABs and newlines
// from a URL and read a backslash as a slash, so "/\t/host" would be
// "//host", another site: p may hold no control character, space or
// backslash at all, and must parse as a path with no scheme or host.
func localPath(p, def string) string {
	bad := strings.IndexFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' || unicode.IsControl(r) })
	if bad >= 0 || !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
		return def
	}
	if u, err := url.Parse(p); err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return def
	}
	return p
}

// apiJobAction answers with the job as it is after the action (`show
// --json`), or 204 No Content when the action removed it. A retry or
// restart adds "rearmed", what came back with the job, as `dlq retry` and
// `restart` say it on stderr (report.RearmedJSON); a cancel adds "died",
// the jobs that died with it, as `cancel` says it (report.DiedJSON).
func (s *Server) apiJobAction(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	id, d, err := s.doJobAction(ctx, r.PathValue("action"), r.PathValue("id"))
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	if d.gone {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	j, runs, err := s.job(ctx, id)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, actionAnswer{ShownJob: report.ShowJSON(j, runs), Rearmed: report.RearmedJSON(d.rearmed),
		Died: report.DiedJSON(d.died)})
}

// actionAnswer is the job after an action, and what came back or died
// with it.
type actionAnswer struct {
	report.ShownJob
	Rearmed *report.RearmedObject `json:"rearmed,omitempty"`
	Died    []string              `json:"died,omitempty"`
}

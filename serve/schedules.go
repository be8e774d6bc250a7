package serve

import (
	"context"
	"net/http"
	"net/url"

	"github.com/queuectl/queuectl/claim"
	"github.com/queuectl/queuectl/report"
)

type scheduleRow struct {
	claim.Schedule
	Next    string
	Command string
	Skipped string // the last due time that made no job of its own, and why
}

type schedulesView struct{ Schedules []scheduleRow }

func (schedulesView) title() string { return "Schedules" }
func (schedulesView) api() string   { return "/api/v1/schedules" }

func (s *Server) schedulesPage(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	list, err := s.store.Schedules(ctx)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	p := s.printer()
	var v schedulesView
	for _, sc := range list {
		row := scheduleRow{Schedule: sc, Next: "paused"}
		if !sc.Paused {
			row.Next = p.Until(sc.NextDue)
		}
		if nj, err := claim.ParseSpec([]byte(sc.Spec)); err == nil {
			row.Command = nj.Command
		}
		if !sc.LastSkipped.IsZero() {
			row.Skipped = sc.LastSkipped.Local().Format("2006-01-02 15:04") + " " + sc.SkipReason
		}
		v.Schedules = append(v.Schedules, row)
	}
	s.render(w, r, http.StatusOK, "schedules", v)
}

// apiSchedules is `schedule list --json`.
func (s *Server) apiSchedules(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	list, err := s.store.Schedules(ctx)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, report.SchedulesJSON(list))
}

// pauseSchedule is `schedule pause NAME` or `schedule resume NAME`.
func (s *Server) pauseSchedule(ctx context.Context, name, action string) error {
	if action != "pause" && action != "resume" {
		return noAction("schedules", action)
	}
	_, _, err := s.store.PauseSchedule(ctx, name, action == "pause")
	return err
}

func (s *Server) scheduleAction(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	if err := s.pauseSchedule(ctx, r.PathValue("name"), r.PathValue("action")); err != nil {
		s.failErr(w, r, err)
		return
	}
	http.Redirect(w, r, "/schedules", http.StatusSeeOther)
}

// apiScheduleAction answers with the schedules as `schedule list --json`
// shows them after the change.
func (s *Server) apiScheduleAction(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	if err := s.pauseSchedule(ctx, r.PathValue("name"), r.PathValue("action")); err != nil {
		s.failErr(w, r, err)
		return
	}
	s.apiSchedules(w, r)
}

func scheduleURL(name, action string) string {
	return "/schedules/" + url.PathEscape(name) + "/" + action
}

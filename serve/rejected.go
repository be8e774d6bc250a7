package serve

import (
	"net/http"
	"net/url"

	"github.com/queuectl/queuectl/report"
	"github.com/queuectl/queuectl/spool"
)

// rejected lists the files in rejected/ with their reasons, as `rejected
// list` does.
func (s *Server) rejected() ([]report.RejectedFile, error) {
	files, err := spool.ListRejected(s.dirs)
	if err != nil {
		return nil, err
	}
	out := make([]report.RejectedFile, len(files))
	for i, f := range files {
		out[i] = report.RejectedFile{Name: f.Name, Size: f.Size, At: f.At, Reason: f.Reason, Fix: f.Fix}
	}
	return out, nil
}

type rejectedRow struct {
	report.RejectedFile
	Age string
}

type rejectedView struct{ Files []rejectedRow }

func (rejectedView) title() string { return "Rejected files" }
func (rejectedView) api() string   { return "/api/v1/rejected" }

func (s *Server) rejectedPage(w http.ResponseWriter, r *http.Request) {
	files, err := s.rejected()
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	p := s.printer()
	var v rejectedView
	for _, f := range files {
		v.Files = append(v.Files, rejectedRow{RejectedFile: f, Age: p.Age(f.At)})
	}
	s.render(w, r, http.StatusOK, "rejected", v)
}

// apiRejected is `rejected list --json`.
func (s *Server) apiRejected(w http.ResponseWriter, r *http.Request) {
	files, err := s.rejected()
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, report.RejectedJSON(files))
}

// rejectedActions are `rejected retry NAME` and `rejected purge NAME`.
var rejectedActions = map[string]func(spool.Dirs, string) error{
	"retry": spool.RetryRejected,
	"purge": spool.PurgeRejected,
}

func (s *Server) doRejected(name, action string) error {
	do, ok := rejectedActions[action]
	if !ok {
		return noAction("rejected", action)
	}
	return do(s.dirs, name)
}

// rejectedAction is a button's POST; back to the list.
func (s *Server) rejectedAction(w http.ResponseWriter, r *http.Request) {
	if err := s.doRejected(r.PathValue("name"), r.PathValue("action")); err != nil {
		s.failErr(w, r, err)
		return
	}
	http.Redirect(w, r, "/rejected", http.StatusSeeOther)
}

// apiRejectedAction answers 204 No Content: the file is no longer there.
func (s *Server) apiRejectedAction(w http.ResponseWriter, r *http.Request) {
	if err := s.doRejected(r.PathValue("name"), r.PathValue("action")); err != nil {
		s.failErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// rejectedURL is the address of an action on rejected file name.
func rejectedURL(name, action string) string {
	return "/rejected/" + url.PathEscape(name) + "/" + action
}

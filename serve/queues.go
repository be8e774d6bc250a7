package serve

import (
	"context"
	"net/http"
	"net/url"
	"slices"

	"github.com/queuectl/queuectl/claim"
)

// pauseQueue is `pause --queue NAME` or `resume --queue NAME`; the name
// claim.AllQueues ("*") is every queue, as `pause` and `resume` without
// --queue.
func (s *Server) pauseQueue(ctx context.Context, name, action string) error {
	switch action {
	case "pause":
		return s.store.Pause(ctx, name)
	case "resume":
		return s.store.Resume(ctx, name)
	}
	return noAction("queues", action)
}

func (s *Server) queueAction(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	if err := s.pauseQueue(ctx, r.PathValue("name"), r.PathValue("action")); err != nil {
		s.failErr(w, r, err)
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// apiQueueAction answers with the queues as GET /api/v1/queues (`queue
// list --json`) shows them after the change, each saying whether it is
// paused.
func (s *Server) apiQueueAction(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := s.ctx(r)
	defer cancel()
	if err := s.pauseQueue(ctx, r.PathValue("name"), r.PathValue("action")); err != nil {
		s.failErr(w, r, err)
		return
	}
	s.apiQueues(w, r)
}

// isPaused reports whether queue is paused, by name or with every queue.
func isPaused(paused []string, queue string) bool {
	return slices.Contains(paused, queue) || slices.Contains(paused, claim.AllQueues)
}

func queueURL(name, action string) string {
	return "/queues/" + url.PathEscape(name) + "/" + action
}

package serve

import (
	"crypto/rand"
	"net/url"
	"slices"
	"sync"
	"time"
)

// notices keeps what an action said, in the CLI's words, for the page the
// browser is sent to after its POST (the form's answer is a redirect, so
// that a reload does not press the button again). The redirect's URL
// carries a key (?notice=…), not the words: a link from elsewhere cannot
// make the page say anything, and the words stay through the reloads of a
// job page that follows its job (app.js reloads it as the job moves on,
// at once when a worker serves its queue), which a cookie read once would
// not. Bounded: the last keepNotices, each for noticeLife.
type notices struct {
	mu   sync.Mutex
	keys []string // oldest first
	said map[string]notice
}

type notice struct {
	lines []string
	at    time.Time
}

const (
	keepNotices = 64
	noticeLife  = time.Hour
)

// add keeps lines, said at now, and returns url with their key added to
// its query; url as it was when there are no lines.
func (n *notices) add(u string, lines []string, now time.Time) string {
	if len(lines) == 0 {
		return u
	}
	key := rand.Text()
	n.mu.Lock()
	if n.said == nil {
		n.said = map[string]notice{}
	}
	if len(n.keys) == keepNotices {
		delete(n.said, n.keys[0])
		n.keys = slices.Delete(n.keys, 0, 1)
	}
	n.keys = append(n.keys, key)
	n.said[key] = notice{lines: lines, at: now}
	n.mu.Unlock()
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := p.Query()
	q.Set("notice", key)
	p.RawQuery = q.Encode()
	return p.String()
}

// get returns the lines kept under key, none when it is unknown or older
// than noticeLife at now. It leaves them: the page may be reloaded.
func (n *notices) get(key string, now time.Time) []string {
	if key == "" {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if said, ok := n.said[key]; ok && now.Sub(said.at) < noticeLife {
		return said.lines
	}
	return nil
}

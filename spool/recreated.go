package spool

import (
	"os"

	"github.com/fsnotify/fsnotify"
)

// A spool directory removed and made again (rm -rf spool; mkdir spool), or
// moved away (mv spool spool.old, the next pass making a new one), is
// another directory at the same path: the watcher's fsnotify watch and its
// ingest directory are in the old one. Each pass first checks that the
// directory at the path is the one the session opened, and re-opens it
// when it is not.

// current reports whether the spool directory at the path, and the
// session's own ingest directory in it, are the ones the session opened.
func (s *session) current() bool {
	fi, err := os.Lstat(s.Dirs.Spool)
	if err != nil || !os.SameFile(fi, s.spool) {
		return false
	}
	own, err := os.Lstat(s.own.path)
	return err == nil && sameFile(s.own.f, own)
}

// follow returns s and fw, or, when the spool directory is no longer the
// one s opened, a new session and fsnotify watch on the directory now at
// the path (saying so), having closed the old ones.
func (w *Watcher) follow(s *session, fw *fsnotify.Watcher) (*session, *fsnotify.Watcher, error) {
	if s.current() {
		return s, fw, nil
	}
	ns, err := w.open()
	if err != nil {
		return s, fw, err
	}
	s.own.close()
	if fw != nil {
		fw.Close()
	}
	nfw, err := w.watch()
	if err != nil {
		w.logf("%v; the spool is only rescanned every %v", err, w.rescan())
	}
	w.logf("the spool directory %s was removed or replaced; ingesting from the directory now there", w.Dirs.Spool)
	return ns, nfw, nil
}

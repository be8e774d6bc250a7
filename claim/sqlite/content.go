package sqlite

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/queuectl/queuectl/claim"
)

// The content mark. A WAL's frames are pages to lay over the database file
// as SQLite last wrote it; laid over other content (a backup copied onto
// queue.db with cp, which keeps the inode), they make a malformed file. In
// WAL mode SQLite writes the database file only when it checkpoints, when
// it switches a file to WAL, and when the last connection closes (a
// checkpoint too). queuectl turns the automatic checkpoint off and does
// each of those itself, under queue.db-ident's exclusive flock, recording
// afterwards the mark of the file as it left it: size, modification time
// and a hash of its first page. A file whose mark is not the recorded one
// was written by something else, so the WAL beside it is not its own:
// the guard sets it aside, and a process that has the file open stops
// using it (ErrReplaced). DECISIONS.md, "A WAL is laid only over the
// content it was written for", has the reasoning and the limits.

// contentMark is what the database file's content is known by.
type contentMark struct {
	Size, Mtime int64
	Head        uint64 // FNV-1a of the first page
	WAL         bool   // the header says WAL mode (format bytes 18-19 = 2)
}

// headSize is how much of the file the mark hashes: SQLite's default page,
// which holds the header (change counter, page count, freelist, schema).
const headSize = 4096

// markOf returns the mark of the open file f.
func markOf(f *os.File) (contentMark, error) {
	fi, err := f.Stat()
	if err != nil {
		return contentMark{}, fmt.Errorf("check database content: %w", err)
	}
	buf := make([]byte, headSize)
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return contentMark{}, fmt.Errorf("check database content: %w", err)
	}
	h := fnv.New64a()
	h.Write(buf[:n])
	return contentMark{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Head: h.Sum64(),
		WAL: n >= 20 && buf[18] == 2 && buf[19] == 2}, nil
}

// record is what queue.db-ident says: the file the WAL beside it belongs
// to, and that file's content as queuectl last left it.
type record struct {
	file fileID
	mark contentMark // zero: not recorded (a home from before the mark)
	// writing: a process was writing the file (a checkpoint) and may have
	// died before recording its mark. The WAL is its own all the same: a
	// checkpoint only copies the WAL's frames into the file.
	writing bool
}

const markFormat = "content: size=%d mtime=%d head=%x wal=%t writing=%t\n"

func (r record) String() string {
	s := r.file.String()
	if r.mark != (contentMark{}) {
		s += fmt.Sprintf(markFormat, r.mark.Size, r.mark.Mtime, r.mark.Head, r.mark.WAL, r.writing)
	}
	return s
}

// readRecord reads the record in f; the zero record when there is none (a
// new or empty file, or text this binary does not read).
func readRecord(f *os.File) (record, error) {
	buf := make([]byte, 512)
	n, err := f.ReadAt(buf, 0)
	if err != nil && err != io.EOF {
		return record{}, fmt.Errorf("read database identity: %w", err)
	}
	var r record
	var m contentMark
	k, err := fmt.Sscanf(string(buf[:n]), "queuectl database file: dev=%d ino=%d birth=%d\n"+markFormat,
		&r.file.Dev, &r.file.Ino, &r.file.Birth, &m.Size, &m.Mtime, &m.Head, &m.WAL, &r.writing)
	switch {
	case k < 3:
		return record{}, nil
	case err == nil:
		r.mark = m
	}
	return r, nil
}

// writeRecord replaces the record in f with r, durably.
func writeRecord(f *os.File, r record) error {
	if err := putRecord(f, r); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("record database identity: %w", err)
	}
	return nil
}

// putRecord replaces the record in f with r, leaving it to the OS to write
// to disk: for the mark written after a write of the file, whose loss in a
// power cut leaves the durable record before it, which says the file was
// being written, and so still vouches for the WAL.
func putRecord(f *os.File, r record) error {
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("record database identity: %w", err)
	}
	if _, err := f.WriteAt([]byte(r.String()), 0); err != nil {
		return fmt.Errorf("record database identity: %w", err)
	}
	return nil
}

// ours reports whether r vouches for the WAL beside a file with identity
// id and content mark m.
func (r record) ours(id fileID, m contentMark) bool {
	return r.file == id && (r.writing || r.mark == m)
}

// vouches reports whether r vouches for the WAL beside the engine's file,
// whose content mark is m: r names the file and its content as queuectl
// last left it, or names the file while a process that keeps no mark has
// it open (unmarkedSharer), whose own checkpoints wrote the content since.
// That WAL is the one such a process goes on writing: set aside, its
// commits from then on would land where no other process reads them.
func (e *Engine) vouches(r record, m contentMark) bool {
	return r.ours(e.id, m) || (r.file == e.id && e.unmarkedSharer())
}

// lockIdent opens queue.db-ident and flocks it (LOCK_SH or LOCK_EX). The
// caller closes the file, which lets the lock go.
func (e *Engine) lockIdent(how int) (*os.File, error) {
	f, err := os.OpenFile(e.path+identSuffix, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if errors.Is(err, syscall.EROFS) && how == syscall.LOCK_SH {
		// A read-only file system (rofs.go): a shared lock only reads.
		f, err = os.OpenFile(e.path+identSuffix, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err := flock(f, how); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// knownMark caches the mark last seen vouched for, so that Check costs one
// stat while nothing writes the file.
type knownMark struct {
	mu   sync.Mutex
	mark contentMark
}

func (k *knownMark) get() contentMark {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.mark
}

func (k *knownMark) set(m contentMark) {
	k.mu.Lock()
	k.mark = m
	k.mu.Unlock()
}

// checkContent returns an ErrReplaced error when the file's content was
// written by something other than queuectl since it last recorded its
// mark (fi is the file's stat, just taken).
func (e *Engine) checkContent(fi os.FileInfo) error {
	if k := e.known.get(); k.Size == fi.Size() && k.Mtime == fi.ModTime().UnixNano() {
		return nil
	}
	// Another process may have checkpointed: its record says so, and the
	// shared flock waits for one that is recording.
	f, err := e.lockIdent(syscall.LOCK_SH)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := readRecord(f)
	if err != nil {
		return err
	}
	m, err := markOf(e.pin)
	if err != nil {
		return err
	}
	if r.mark == (contentMark{}) || r.ours(e.id, m) {
		if r.mark == m {
			e.known.set(m)
		}
		return nil
	}
	if e.vouches(r, m) {
		// Recorded now, while that process is there to vouch for it: once
		// it is gone, the mark it left would read as an overwrite.
		if err := flock(f, syscall.LOCK_EX); err != nil {
			return err
		}
		return e.recordSharedMark(f)
	}
	return e.overwritten()
}

// recordSharedMark records the mark of content that a process keeping no
// mark wrote, under ident's exclusive flock (f), after checking again: the
// flock was let go while it changed.
func (e *Engine) recordSharedMark(f *os.File) error {
	r, m, err := e.vouched(f)
	if err != nil {
		return err
	}
	e.known.set(m)
	if r.writing || r.mark == (contentMark{}) {
		return nil // a checkpoint is being recorded, or there is no mark to keep
	}
	return putRecord(f, record{file: e.id, mark: m})
}

// vouched reads ident's record (f, flocked) and the mark of the file at
// the engine's path, and returns them; ErrReplaced when the path names
// another file, or the record, having a mark, does not vouch for this
// content (vouches).
func (e *Engine) vouched(f *os.File) (record, contentMark, error) {
	r, err := readRecord(f)
	if err != nil {
		return r, contentMark{}, err
	}
	if err := e.checkPath(); err != nil {
		return r, contentMark{}, err
	}
	m, err := markOf(e.pin)
	if err != nil {
		return r, m, err
	}
	if r.mark != (contentMark{}) && !e.vouches(r, m) {
		return r, m, e.overwritten()
	}
	return r, m, nil
}

func (e *Engine) overwritten() error {
	return fmt.Errorf("%w: %s was deleted or replaced while queuectl had it open (its content was overwritten); start queuectl again to use the file now there", claim.ErrReplaced, e.path)
}

// checkpointEvery is how many commits a process makes between its
// checkpoints: about SQLite's default of 1,000 WAL pages, at the worker's
// ten or so pages a commit.
const checkpointEvery = 100

// checkpoint copies the WAL into the database file (PASSIVE: it waits for
// no reader) and records the file's new mark. It refuses, with ErrReplaced,
// to write a file whose content is not the one recorded.
func (e *Engine) checkpoint(ctx context.Context) error {
	// The connection before the flock, as every write takes them.
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer conn.Close()
	return e.writingFile(func() error {
		_, err := conn.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
		return err
	})
}

// writingFile runs write, which writes the database file from its WAL,
// under ident's exclusive flock, between a record that says the file is
// being written and one with the mark it was left with.
func (e *Engine) writingFile(write func() error) error {
	f, err := e.lockIdent(syscall.LOCK_EX)
	if err != nil {
		return err
	}
	defer f.Close()
	_, m, err := e.vouched(f)
	if err != nil {
		return err
	}
	if err := writeRecord(f, record{file: e.id, mark: m, writing: true}); err != nil {
		return err
	}
	if err := write(); err != nil {
		return err
	}
	if m, err = markOf(e.pin); err != nil {
		return err
	}
	e.known.set(m)
	return putRecord(f, record{file: e.id, mark: m})
}

// closeDB closes the connections: the last one to close checkpoints and
// deletes the WAL, so it is closed as a checkpoint is made. A file whose
// content is no longer the one recorded gets nothing: the connections are
// abandoned, not closed, and the process is about to stop anyway.
func (e *Engine) closeDB() error {
	var err error
	werr := e.writingFile(func() error {
		err = e.db.Close()
		return nil
	})
	if errors.Is(werr, claim.ErrReplaced) {
		return nil
	}
	if werr != nil && err == nil {
		// The ident file could not be locked (a read-only home): close
		// anyway, as a process without the guard would.
		err = e.db.Close()
	}
	return err
}

package run

import "github.com/queuectl/queuectl/claim"

// ring keeps the last claim.TailBytes bytes written to it, and counts them
// all: the tail of one stream of a run, stored with the run when it ends
// (SPEC §9). It grows with what arrives, so a stream that prints a line
// holds a line, and never holds more than TailBytes; a silent stream holds
// nothing at all. Not safe for concurrent use: one copier writes it, and
// reads it once that copier is done.
type ring struct {
	buf  []byte // up to TailBytes; once full, the oldest byte is at head
	head int
	size int64
}

// write adds p to the tail.
func (t *ring) write(p []byte) {
	t.size += int64(len(p))
	const limit = claim.TailBytes
	if len(p) >= limit {
		// p alone fills the tail: what came before is gone.
		t.grow(limit)
		t.buf = append(t.buf[:0], p[len(p)-limit:]...)
		t.head = 0
		return
	}
	if room := limit - len(t.buf); room > 0 {
		n := min(room, len(p))
		t.grow(len(t.buf) + n)
		t.buf = append(t.buf, p[:n]...)
		p = p[n:]
	}
	// Full: p overwrites the oldest bytes, from head on, wrapping once.
	for len(p) > 0 {
		n := copy(t.buf[t.head:], p)
		p = p[n:]
		t.head = (t.head + n) % limit
	}
}

// grow makes room for n bytes, doubling up to TailBytes rather than
// letting append round past it.
func (t *ring) grow(n int) {
	if n <= cap(t.buf) {
		return
	}
	c := min(max(n, 2*cap(t.buf), 512), claim.TailBytes)
	buf := make([]byte, len(t.buf), c)
	copy(buf, t.buf)
	t.buf = buf
}

// tail is what the ring holds, oldest byte first, and the size of the
// stream. The ring is done with: the tail may share its buffer.
func (t *ring) tail() claim.Tail {
	data := t.buf
	if t.head > 0 {
		data = append(append(make([]byte, 0, len(t.buf)), t.buf[t.head:]...), t.buf[:t.head]...)
	}
	if len(data) == 0 {
		data = nil
	}
	return claim.Tail{Data: data, Size: t.size}
}

package jobs

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"sync/atomic"
	"time"
)

// NewID returns a unique job id that sorts by creation time and reads as one:
// 20261121-054500.123456-9f2c1ab0. Within a process the ids sort in the
// order they were made: one made in the same microsecond as the last (or,
// with a clock set back, earlier) takes the microsecond after it.
func NewID(now time.Time) string {
	us := now.UnixMicro()
	for {
		last := lastID.Load()
		next := max(us, last+1)
		if us < last-int64(time.Second/time.Microsecond) {
			next = us // a clock set back (or a test's): do not run on from the past
		}
		if lastID.CompareAndSwap(last, next) {
			us = next
			break
		}
	}
	// The suffix only tells apart ids of the same microsecond made by
	// different processes: it needs to be unpredictable to none, so it
	// comes from the runtime's generator (seeded by the kernel at exec),
	// not crypto/rand, whose first read costs every enqueue ~0.1 ms.
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], rand.Uint32())
	return time.UnixMicro(us).UTC().Format("20060102-150405.000000") + "-" + hex.EncodeToString(b[:])
}

// lastID is the microsecond of the last id NewID made.
var lastID atomic.Int64

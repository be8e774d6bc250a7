package report

import (
	"io"
	"iter"
	"sync"
)

// pipeline writes a stream of jobs (claim.Job; DeadJob for `dlq list`)
// over several CPUs, in the order read: one goroutine ranges the stream
// and hands its jobs over in batches, workers render batches to bytes,
// and the caller's goroutine writes them.
// Reading a row (the store's step and scan) and rendering it (JSON) are
// each a large share of a list's CPU, so they overlap. (A table's row,
// since appendRows, costs little next to its reading.)
//
// Batch i goes to worker i mod workers and is written i-th: the order
// needs no bookkeeping. Each hand-over holds at most slack batches, so at
// most (2*slack+1)*workers+2 batches exist at once (one filling, one a
// worker, one being written, and those waiting), and they are reused:
// memory is flat at any length. The first batch goes alone: no other
// batch competes with it for a CPU, so the first rows show as soon as
// they would without the pipeline.
type pipeline[T any] struct {
	size    int             // jobs a batch
	workers int             // goroutines rendering batches, at least 1
	slack   int             // batches a hand-over holds: the reader runs on while a write waits
	render  func(*batch[T]) // appends b.jobs' bytes to b.out; sets b.err on failure

	// One run's hand-overs: worker k takes from ins[k] and gives to outs[k].
	ins, outs []chan *batch[T]
	free      chan *batch[T] // written batches, for the reader to fill again
	shown     chan struct{}  // closed once the first batch is written
	stop      chan struct{}  // closed when run returns
}

// batch is a run of jobs in the order read and, once rendered, their
// bytes. err is the stream's error that cut the batch short, or the
// render's: render decides what of a cut batch to show.
type batch[T any] struct {
	n    int // the batch's place in the stream, from 0
	jobs []T
	out  []byte
	err  error
}

// run ranges seq and writes every batch to w in order, the last one even
// when empty, so that batch 0 is always rendered. It returns the number of
// jobs written and the first error: the stream's (after writing what
// render made of its last batch), the render's or w's. On an error it
// stops ranging seq at the next hand-over; it returns only after every
// goroutine it started has ended, so the stream (the store's rows) is
// closed by then.
func (pl pipeline[T]) run(w io.Writer, seq iter.Seq2[T, error]) (int, error) {
	pl.ins, pl.outs = make([]chan *batch[T], pl.workers), make([]chan *batch[T], pl.workers)
	pl.free = make(chan *batch[T], (2*pl.slack+1)*pl.workers+2)
	pl.shown, pl.stop = make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	for k := range pl.workers {
		pl.ins[k], pl.outs[k] = make(chan *batch[T], pl.slack), make(chan *batch[T], pl.slack)
		wg.Go(func() { pl.work(k) })
	}
	wg.Go(func() { pl.read(seq) })
	defer wg.Wait()
	defer close(pl.stop)
	written := 0
	for i := 0; ; i++ {
		b, ok := <-pl.outs[i%pl.workers]
		if !ok {
			return written, nil
		}
		if len(b.out) > 0 {
			if _, err := w.Write(b.out); err != nil {
				return written, err
			}
		}
		if b.err != nil {
			return written, b.err
		}
		if i == 0 {
			close(pl.shown)
		}
		written += len(b.jobs)
		pl.free <- b
	}
}

// work renders the batches of worker k until the reader is done or run
// returns.
func (pl pipeline[T]) work(k int) {
	defer close(pl.outs[k])
	for b := range pl.ins[k] {
		pl.render(b)
		select {
		case pl.outs[k] <- b:
		case <-pl.stop:
			return
		}
	}
}

// read ranges seq into batches and hands them to the workers in turn,
// until seq ends, errs or run returns. Closing ins tells the workers.
func (pl pipeline[T]) read(seq iter.Seq2[T, error]) {
	defer func() {
		for _, in := range pl.ins {
			close(in)
		}
	}()
	n := 0
	var b *batch[T] // filling; nil between hand-overs
	send := func() bool {
		select {
		case <-pl.stop: // before a hand-over with room, which select may pick
			return false
		default:
		}
		select {
		case pl.ins[n%len(pl.ins)] <- b:
			n, b = n+1, nil
		case <-pl.stop:
			return false
		}
		if n == 1 {
			select {
			case <-pl.shown:
			case <-pl.stop:
				return false
			}
		}
		return true
	}
	for j, err := range seq {
		if b == nil {
			b = pl.batch(n)
		}
		if err != nil {
			b.err = err
			send()
			return
		}
		b.jobs = append(b.jobs, j)
		if len(b.jobs) == pl.size && !send() {
			return
		}
	}
	if b == nil && n == 0 {
		b = pl.batch(n)
	}
	if b != nil {
		send()
	}
}

// batch returns an empty batch number n, a written one when there is one.
func (pl pipeline[T]) batch(n int) *batch[T] {
	select {
	case b := <-pl.free:
		clear(b.jobs) // let the strings of written jobs go
		b.n, b.jobs, b.out, b.err = n, b.jobs[:0], b.out[:0], nil
		return b
	default:
		return &batch[T]{n: n, jobs: make([]T, 0, pl.size)}
	}
}

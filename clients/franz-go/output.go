// The event lines and their order (clients/README.md, "Events"): the Event
// builder is ../gojob/event.go; the Output, prodsim-sarama's with what kgo
// needs more:
// a message its produce call refused (Refused), and a wait for every
// outcome (WaitSettled), since kgo reports on its own goroutine.
package main

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// The driver's first instant; every t_us counts from it (monotonic).
var start = time.Now()

// stdout carries the protocol's lines.
var stdout = os.Stdout

func nowUs() int64 { return time.Since(start).Microseconds() }

// Output serialises stdout and keeps the per-id bookkeeping of what was
// printed. All fields are guarded by mu.
type Output struct {
	mu       sync.Mutex
	produced []bool             // index id: its "produce" was printed
	refused  []bool             // index id: its produce call refused it
	settled  []bool             // index id: an outcome was printed
	pending  map[int64][][]byte // outcomes waiting for their "produce"
	handed   int64              // produce lines printed
	outcomes int64              // distinct ids settled after a produce
	closed   bool               // "closed" printed: nothing more on stdout
	lines    int64              // lines written to stdout
	changed  chan struct{}      // a token after every settle (WaitSettled)
}

func NewOutput(messages int64) *Output {
	return &Output{
		produced: make([]bool, messages+1),
		refused:  make([]bool, messages+1),
		settled:  make([]bool, messages+1),
		pending:  map[int64][][]byte{},
		changed:  make(chan struct{}, 1),
	}
}

// write puts one line on stdout (or, after "closed", on stderr, where a
// person sees kgo's surprise). REQUIRES: o.mu held. A failed write
// (prodsim gone; SIGPIPE is ignored) is dropped.
func (o *Output) write(line []byte) {
	if o.closed {
		os.Stderr.Write(append([]byte("prodsim-franz-go: after closed: "), line...))
		return
	}
	o.lines++
	stdout.Write(line)
}

// Lines is how many lines went to stdout.
func (o *Output) Lines() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lines
}

// Raw prints a lockstep line, which may follow "closed".
func (o *Output) Raw(line []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lines++
	stdout.Write(line)
}

func (o *Output) Print(e *Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.write(e.Line())
}

// Produce prints id's "produce" and then any outcome that came first.
func (o *Output) Produce(id int64, e *Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.produced[id] {
		panic(fmt.Sprintf("produce printed twice for id %d", id))
	}
	o.write(e.Line())
	o.produced[id] = true
	o.handed++
	o.flushPending(id, true)
}

// Refused: id's produce call gave it back (its outcome, an error, is the
// only line for it). Its outcome prints now if it came, else when it comes.
func (o *Output) Refused(id int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.refused[id] = true
	o.flushPending(id, false)
}

// REQUIRES: o.mu held.
func (o *Output) flushPending(id int64, counted bool) {
	for _, line := range o.pending[id] {
		if counted {
			o.settle(id)
		}
		o.write(line)
	}
	delete(o.pending, id)
}

// REQUIRES: o.mu held, o.produced[id].
func (o *Output) settle(id int64) {
	if !o.settled[id] {
		o.settled[id] = true
		o.outcomes++
		select {
		case o.changed <- struct{}{}:
		default:
		}
	}
}

// Outcome prints an "ack" or "error" for id, after its "produce". An id
// outside the job is printed at once.
func (o *Output) Outcome(id int64, e *Event) {
	line := e.Line() // stamped when kgo reported it
	o.mu.Lock()
	defer o.mu.Unlock()
	if id < 1 || id >= int64(len(o.produced)) || o.produced[id] || o.refused[id] {
		if id >= 1 && id < int64(len(o.produced)) && o.produced[id] {
			o.settle(id)
		}
		o.write(line)
		return
	}
	o.pending[id] = append(o.pending[id], line)
}

// Outstanding: handed to kgo and not yet reported.
func (o *Output) Outstanding() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.handed - o.outcomes
}

// WaitSettled waits until nothing is outstanding, at most until deadline.
func (o *Output) WaitSettled(deadline time.Time) bool {
	for o.Outstanding() > 0 {
		d := time.Until(deadline)
		if d <= 0 {
			return false
		}
		t := time.NewTimer(d)
		select {
		case <-o.changed:
		case <-t.C:
		}
		t.Stop()
	}
	return true
}

// PrintAfterClosed prints a goroutine report's line, the only event lines
// the protocol allows after "closed".
func (o *Output) PrintAfterClosed(e *Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lines++
	stdout.Write(e.Line())
}

// Closed prints "closed"; anything after it but the goroutine report goes
// to stderr.
func (o *Output) Closed(flushed bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	flush := "ok"
	if !flushed {
		flush = "timed_out"
	}
	o.write(NewEvent("closed").Int("outstanding", o.handed-o.outcomes).Str("flush", flush).Line())
	o.closed = true
}

func printJobError(text string) {
	stdout.Write(append([]byte(`{"event":"job_error","text":`+quote(cut(text))), '}', '\n'))
}

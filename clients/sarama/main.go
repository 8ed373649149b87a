// prodsim-sarama: the driver that runs a real Sarama AsyncProducer
// (github.com/IBM/sarama, or github.com/Shopify/sarama before 1.40; build.sh
// chooses) against prodsim's cluster, speaking the driver protocol of
// clients/README.md: one job line on stdin, one JSON event per line on
// stdout, Sarama's own log (sarama.Logger) on stderr.
//
// Two goroutines print: the main one ("start", "produce", "closing",
// "closed") and the outcome reader ("ack", "error", from Successes() and
// Errors()). Every line goes through one Output under a mutex, written
// whole with one write(2). A message's outcome can be read before the main
// goroutine, back from the send on Input(), has printed its "produce"; the
// Output then holds the outcome line until that "produce" is printed, so a
// produce always comes first. An outcome for an id that was never sent is
// printed as it comes, for prodsim to judge.
//
// Choices the protocol leaves open, made here:
//   - Sarama has no fatal state, no purge and no error callback: the driver
//     never prints "fatal", "client_error" only for a failed
//     NewAsyncProducer (below), every "error" has fatal
//     false and status "unknown" (Sarama does not say whether a failed
//     message may be in the log), and closing does not purge.
//   - "code" is the KError number for a Kafka error, else -1; "name" is
//     the Go identifier (errname.go); "text" is err.Error().
//   - Messages are sent with Partition -1 (the hash partitioner overwrites
//     it), so an error for a message never partitioned says -1.
//   - The value is `value_bytes` bytes of 'a'..'z' repeated, one shared
//     slice (Sarama only reads it).
//   - Closing: AsyncClose(), then wait for Successes() and Errors() to be
//     closed for at most flush_timeout_ms. Past that, "closed" says
//     flush "timed_out" with what is still outstanding, and the driver
//     exits 0 without waiting for Sarama (prodsim kills the group anyway).
//   - sarama.NewAsyncProducer connects to the bootstrap brokers and reads
//     metadata (and, idempotent, a producer id) before it returns; a
//     failure is a client_error line and another attempt a second later,
//     as the model's application retries (NewProducer); after 10 failed
//     attempts, exit 3 after a job_error line.
//   - After "closed", if Close returned within the flush timeout, the
//     goroutine report (goroutines.go): Sarama's goroutines still alive.
//     After a timed-out flush there is none: Sarama is still closing, so
//     its goroutines are alive by design.
package main

import (
	"bufio"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/IBM/sarama"
)

const (
	kExitOk          = 0
	kExitJobError    = 2
	kExitCreateError = 3
	// NewProducer: attempts of sarama.NewAsyncProducer, and the wait between
	// two (the model's application waits 1 s).
	kNewProducerAttempts = 10
	kNewProducerRetry    = time.Second
	kHeaderName          = "prodsim-id"
)

// The driver's first instant; every t_us counts from it (monotonic). In
// simulated time (lockstep.go) it is reset inside the bubble, on the
// bubble's clock.
var start = time.Now()

// stdout carries the protocol's lines. In simulated time os.Stdout is
// pointed at stderr, so that the testing package's own lines (a failed
// test's "--- FAIL") cannot reach prodsim.
var stdout = os.Stdout

// saramaVersion is set by build.sh (-ldflags -X main.saramaVersion=...).
var saramaVersion = "unknown"

func nowUs() int64 { return time.Since(start).Microseconds() }

// Output serialises stdout and keeps the per-id bookkeeping of what was
// printed. All fields are guarded by mu.
type Output struct {
	mu       sync.Mutex
	produced []bool             // index id: its "produce" was printed
	settled  []bool             // index id: an outcome was printed
	pending  map[int64][][]byte // outcomes waiting for their "produce"
	handed   int64              // produce lines printed
	outcomes int64              // distinct ids settled after a produce
	closed   bool               // "closed" printed: nothing more on stdout
	lines    int64              // lines written to stdout
}

func NewOutput(messages int64) *Output {
	return &Output{
		produced: make([]bool, messages+1),
		settled:  make([]bool, messages+1),
		pending:  map[int64][][]byte{},
	}
}

// write puts one line on stdout (or, after "closed", on stderr, where a
// person sees Sarama's surprise). REQUIRES: o.mu held. A failed write
// (prodsim gone; SIGPIPE is ignored) is dropped.
func (o *Output) write(line []byte) {
	if o.closed {
		os.Stderr.Write(append([]byte("prodsim-sarama: after closed: "), line...))
		return
	}
	o.lines++
	stdout.Write(line)
}

// Lines is how many lines went to stdout (simulated time's run-ahead stops
// at the first instant that printed one).
func (o *Output) Lines() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lines
}

// Raw prints a lockstep line (lockstep.go), which may follow "closed".
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
	for _, line := range o.pending[id] {
		o.settle(id)
		o.write(line)
	}
	delete(o.pending, id)
}

// REQUIRES: o.mu held, o.produced[id].
func (o *Output) settle(id int64) {
	if !o.settled[id] {
		o.settled[id] = true
		o.outcomes++
	}
}

// Outcome prints an "ack" or "error" for id, after its "produce". An id
// outside the job (not the driver's Metadata) is printed at once.
func (o *Output) Outcome(id int64, e *Event) {
	line := e.Line() // stamped when Sarama reported it
	o.mu.Lock()
	defer o.mu.Unlock()
	if id < 1 || id >= int64(len(o.produced)) || o.produced[id] {
		if id >= 1 && id < int64(len(o.produced)) {
			o.settle(id)
		}
		o.write(line)
		return
	}
	o.pending[id] = append(o.pending[id], line)
}

// Outstanding: handed to Sarama and not yet reported.
func (o *Output) Outstanding() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.handed - o.outcomes
}

// PrintAfterClosed prints the goroutine report's lines, the only ones the
// protocol allows after "closed".
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

// messageID is the id the driver put in Metadata, or 0.
func messageID(msg *sarama.ProducerMessage) int64 {
	if msg == nil {
		return 0
	}
	id, _ := msg.Metadata.(int64)
	return id
}

// ReadOutcomes prints every success and error until Sarama closes both
// channels, then closes done.
func ReadOutcomes(p sarama.AsyncProducer, out *Output, done chan<- struct{}) {
	successes, errs := p.Successes(), p.Errors()
	for successes != nil || errs != nil {
		select {
		case msg, ok := <-successes:
			if !ok {
				successes = nil
				continue
			}
			id := messageID(msg)
			out.Outcome(id, NewEvent("ack").Int("id", id).
				Int("partition", int64(msg.Partition)).Int("offset", msg.Offset))
		case perr, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			id, partition := messageID(perr.Msg), int64(-1)
			if perr.Msg != nil {
				partition = int64(perr.Msg.Partition)
			}
			code, name := ErrorName(perr.Err)
			text := "<nil>"
			if perr.Err != nil {
				text = perr.Err.Error()
			}
			out.Outcome(id, NewEvent("error").Int("id", id).Int("partition", partition).
				Int("code", code).Str("name", name).Str("text", text).
				Str("status", "unknown").Bool("fatal", false))
		}
	}
	close(done)
}

// Workload is the production loop's state.
type Workload struct {
	job       *Job
	p         sarama.AsyncProducer
	out       *Output
	value     []byte
	closeC    <-chan time.Time // nil when close_at_us is -1
	closeDone bool
}

func (w *Workload) message(id int64) (*sarama.ProducerMessage, *Event) {
	i := id - 1
	topic := w.job.Topics[i%int64(len(w.job.Topics))]
	msg := &sarama.ProducerMessage{
		Topic:     topic,
		Value:     sarama.ByteEncoder(w.value),
		Headers:   []sarama.RecordHeader{{Key: []byte(kHeaderName), Value: []byte(strconv.FormatInt(id, 10))}},
		Metadata:  id,
		Partition: -1,
	}
	e := NewEvent("produce").Int("id", id).Str("topic", topic)
	if w.job.Keys > 0 {
		key := "key-" + strconv.FormatInt(i%w.job.Keys, 10)
		msg.Key = sarama.StringEncoder(key)
		e.Str("key", key)
	} else {
		e.Null("key")
	}
	return msg, e
}

// closeDue polls the close timer without blocking.
func (w *Workload) closeDue() bool {
	if !w.closeDone && w.closeC != nil {
		select {
		case <-w.closeC:
			w.closeDone = true
		default:
		}
	}
	return w.closeDone
}

// waitUntil sleeps to due_us after start; false if the close timer fires
// first. With dueUs < 0 it waits for the close timer alone.
func (w *Workload) waitUntil(dueUs int64) bool {
	if w.closeDue() {
		return false
	}
	var dueC <-chan time.Time
	if dueUs >= 0 {
		d := time.Duration(dueUs-nowUs()) * time.Microsecond
		if d <= 0 {
			return true
		}
		t := time.NewTimer(d)
		defer t.Stop()
		dueC = t.C
	}
	select {
	case <-dueC:
		return true
	case <-w.closeC:
		w.closeDone = true
		return false
	}
}

// send hands id to Input(); false if the close timer fired first.
func (w *Workload) send(id int64) bool {
	if w.closeDue() {
		return false
	}
	msg, e := w.message(id)
	select {
	case w.p.Input() <- msg:
		w.out.Produce(id, e)
		return true
	case <-w.closeC:
		w.closeDone = true
		return false
	}
}

// Run produces in bursts as the model's application does (prodsim's
// scenarios/runner.cc Application): the first burst once the producer
// exists, each next one interval_us after the previous one was handed over.
func (w *Workload) Run() {
	id := int64(1)
	for burst := int64(0); id <= w.job.Messages; burst++ {
		if burst > 0 && !w.waitUntil(nowUs()+w.job.IntervalUs) {
			return
		}
		for k := int64(0); k < w.job.Burst && id <= w.job.Messages; k, id = k+1, id+1 {
			if !w.send(id) {
				return
			}
		}
	}
	if w.closeC != nil {
		w.waitUntil(-1)
	}
}

func readJobLine() ([]byte, error) {
	r := bufio.NewReaderSize(os.Stdin, 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > kJobLineBytesMax+1 {
			return nil, fmt.Errorf("a job line longer than %d bytes", kJobLineBytesMax)
		}
		if err == nil || !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
	}
	line = []byte(strings.TrimSuffix(string(line), "\n"))
	if len(line) == 0 {
		return nil, errors.New("no job line on stdin")
	}
	return line, nil
}

// NewProducer calls sarama.NewAsyncProducer as an application that retries
// does, and as the model's application (scenarios/runner.cc, Application):
// a failure (no broker answered for metadata, the idempotent producer could
// not get a producer id) is a client_error line, and the next attempt
// starts kNewProducerRetry later, for at most kNewProducerAttempts attempts.
// What a failed attempt leaves running (v1.42.1 does not close the client
// it made) stays alive beside the producer that starts, so the goroutine
// report after Close shows it.
func NewProducer(addrs []string, config *sarama.Config, out *Output) (sarama.AsyncProducer, error) {
	var err error
	for attempt := 1; attempt <= kNewProducerAttempts; attempt++ {
		var p sarama.AsyncProducer
		if p, err = sarama.NewAsyncProducer(addrs, config); err == nil {
			return p, nil
		}
		code, name := ErrorName(err)
		out.Print(NewEvent("client_error").Int("code", code).Str("name", name).
			Str("text", "sarama.NewAsyncProducer: "+err.Error()).Int("attempt", int64(attempt)))
		if attempt < kNewProducerAttempts {
			time.Sleep(kNewProducerRetry)
		}
	}
	return nil, err
}

func run() int {
	line, err := readJobLine()
	if err != nil {
		printJobError(err.Error())
		return kExitJobError
	}
	job, config, err := ReadJob(line)
	if err != nil {
		printJobError(err.Error())
		return kExitJobError
	}
	return RunJob(job, config, NewOutput(job.Messages))
}

// ReadJob parses the job line and builds its sarama.Config (not yet
// validated: simulated time adds its dialer first).
func ReadJob(line []byte) (*Job, *sarama.Config, error) {
	job, err := ParseJob(line)
	if err != nil {
		return nil, nil, err
	}
	config, err := NewConfig(job.Config)
	if err != nil {
		return nil, nil, err
	}
	return job, config, nil
}

// RunJob runs a parsed job to its end and gives the exit code; the caller
// has printed nothing yet.
func RunJob(job *Job, config *sarama.Config, out *Output) int {
	if err := config.Validate(); err != nil {
		printJobError(err.Error())
		return kExitJobError
	}
	p, err := NewProducer(strings.Split(job.Bootstrap, ","), config, out)
	if err != nil {
		printJobError(fmt.Sprintf("sarama.NewAsyncProducer failed %d times, the last: %v",
			kNewProducerAttempts, err))
		return kExitCreateError
	}
	out.Print(NewEvent("start").Str("client", "sarama").Str("version", saramaVersion))
	done := make(chan struct{})
	go ReadOutcomes(p, out, done)

	w := &Workload{job: job, p: p, out: out, value: make([]byte, job.ValueBytes)}
	for i := range w.value {
		w.value[i] = byte('a' + i%26)
	}
	if job.CloseAtUs >= 0 {
		d := time.Duration(job.CloseAtUs-nowUs()) * time.Microsecond
		w.closeC = time.After(d) // a past due time fires at once
	}
	w.Run()

	out.Print(NewEvent("closing").Int("outstanding", out.Outstanding()))
	p.AsyncClose()
	flush := time.NewTimer(time.Duration(job.FlushTimeoutMs) * time.Millisecond)
	flushed := false
	select {
	case <-done:
		flushed = true
	case <-flush.C:
	}
	out.Closed(flushed)
	if flushed {
		ReportGoroutines(out)
	}
	return kExitOk
}

func main() {
	signal.Ignore(syscall.SIGPIPE)
	sarama.Logger = log.New(os.Stderr, "[sarama] ", log.LstdFlags|log.Lmicroseconds)
	if os.Getenv("PRODSIM_CLOCK") == "simulated" {
		os.Exit(RunSimulated())
	}
	os.Exit(run())
}

// prodsim-franz-go: the driver that runs a real franz-go producer
// (github.com/twmb/franz-go/pkg/kgo, kgo.Client.Produce) against prodsim's
// cluster, speaking the driver protocol of clients/README.md: one job line
// on stdin, one JSON event per line on stdout, kgo's own log (kgo.WithLogger
// at info level) on stderr.
//
// kgo calls every promise on one goroutine of its own, so outcome lines come
// from there while the producing goroutines print "produce"; every line goes
// through one Output (output.go), which holds an outcome until its
// "produce" is printed.
//
// Choices the protocol leaves open, made here:
//   - The application: concurrent_producers goroutines (default 1), message
//     id going to goroutine (id-1) mod N, each calling Produce for its
//     share of a burst in id order. With N > 1 the start line says
//     "order":"per_call" and each produce line's "call" is the goroutine
//     (0..N-1): kgo keeps the order of one goroutine's records to a
//     partition, not between goroutines.
//   - Produce blocks while MaxBufferedRecords are buffered; a record's
//     context is cancelled only if close_at_us comes while its Produce is
//     still blocked. kgo then gives it back with context.Canceled: an
//     "error" without a "produce" (refused at produce).
//   - "code" is the Kafka error code for a kerr error, else -1; "name" its
//     Kafka name, or "_" and the Go identifier (errname.go); "text"
//     err.Error().
//   - "status": kgo has no per-record verdict. An idempotent kgo fails a
//     record only when that is safe for its sequence numbers (config.go,
//     RecordDeliveryTimeout: "if a record was never issued in a request to
//     Kafka, or if it was requested and received a response"), unless
//     AllowIdempotentProduceCancellation; but a response with an error does
//     not say the record is absent: REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS_
//     AFTER_APPEND and a KAFKA_STORAGE_ERROR answered to a waiting acks=all
//     request all come after the leader appended it. So: not_persisted only
//     for ErrMaxBuffered (never buffered) and a refused record;
//     possibly_persisted for every other failure.
//   - "fatal": with StopProducerOnDataLossDetected, kgo fails its producer
//     id for good on OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID,
//     INVALID_PRODUCER_ID_MAPPING or INVALID_PRODUCER_EPOCH (sink.go
//     handleRetryBatches), and every later record fails with that error:
//     the first such error is a "fatal" line and it and every error after
//     it say fatal true. Without the option kgo bumps its epoch and
//     retries (never fatal).
//   - No client_error lines: kgo.NewClient does not connect, and kgo's
//     connection trouble is in its log on stderr (as prodsim-sarama keeps
//     Sarama's).
//   - Closing: Flush with flush_timeout_ms; if it times out, Close, which
//     fails every buffered record with ErrClientClosed, and the driver
//     waits (kPurgeWait) for those reports before "closed". After a flush
//     that was ok, "closed" and then Close.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	kExitOk       = 0
	kExitJobError = 2
	kHeaderName   = "prodsim-id"
	// kPurgeWait bounds the wait for the reports of what Close failed, and
	// for the promises kgo has not yet called after a flush returned.
	kPurgeWait = 5 * time.Second
)

// kgoVersion is set by build.sh (-ldflags -X main.kgoVersion=...).
var kgoVersion = "unknown"

// Workload is the production loop's state.
type Workload struct {
	job   *Job
	s     *Settings
	cl    *kgo.Client
	out   *Output
	value []byte

	stopC chan struct{} // closed at close_at_us
	fatal atomic.Bool   // kgo failed its producer id for good

	mu      sync.Mutex
	stopped bool
	inside  map[int64]*inProduce // ids whose Produce has not returned
	refused map[int64]bool       // ids cancelled inside Produce
}

// inProduce is one Produce call not yet returned.
type inProduce struct {
	cancel  context.CancelFunc
	refused bool // cancelled at close_at_us
}

func (w *Workload) record(id int64, call int) (*kgo.Record, *Event) {
	i := id - 1
	topic := w.job.Topics[i%int64(len(w.job.Topics))]
	r := &kgo.Record{
		Topic:     topic,
		Value:     w.value,
		Headers:   []kgo.RecordHeader{{Key: kHeaderName, Value: []byte(strconv.FormatInt(id, 10))}},
		Partition: -1, // the partitioner sets it; an error before says -1
	}
	e := NewEvent("produce").Int("id", id).Str("topic", topic)
	if w.job.Keys > 0 {
		key := "key-" + strconv.FormatInt(i%w.job.Keys, 10)
		r.Key = []byte(key)
		e.Str("key", key)
	} else {
		e.Null("key")
	}
	if w.s.concurrentProducers > 1 {
		e.Int("call", int64(call))
	}
	return r, e
}

// Stop is close_at_us: no more produce calls, and those blocked in Produce
// are cancelled.
func (w *Workload) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	w.stopped = true
	close(w.stopC)
	for id, p := range w.inside {
		p.refused = true
		w.refused[id] = true
		p.cancel()
	}
}

// produce hands id to kgo; false if the close time came first.
func (w *Workload) produce(id int64, call int) bool {
	r, e := w.record(id, call)
	ctx, cancel := context.WithCancel(context.Background())
	p := &inProduce{cancel: cancel}
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		cancel()
		return false
	}
	w.inside[id] = p
	w.mu.Unlock()
	w.cl.Produce(ctx, r, func(r *kgo.Record, err error) { w.outcome(id, r, err) })
	w.mu.Lock()
	delete(w.inside, id)
	refused := p.refused
	w.mu.Unlock()
	if refused {
		w.out.Refused(id)
		return false
	}
	w.out.Produce(id, e)
	return true
}

// dataLossErrors fail kgo's producer id for good under
// StopProducerOnDataLossDetected (sink.go handleRetryBatches).
var dataLossErrors = []error{kerr.OutOfOrderSequenceNumber, kerr.UnknownProducerID,
	kerr.InvalidProducerIDMapping, kerr.InvalidProducerEpoch}

func (w *Workload) isFatal(err error) bool {
	if !w.s.stopOnDataLoss {
		return false
	}
	for _, e := range dataLossErrors {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func (w *Workload) status(err error, refused bool) string {
	if refused || errors.Is(err, kgo.ErrMaxBuffered) {
		return "not_persisted"
	}
	return "possibly_persisted"
}

// outcome is a record's promise: an "ack" or an "error".
func (w *Workload) outcome(id int64, r *kgo.Record, err error) {
	if err == nil {
		w.out.Outcome(id, NewEvent("ack").Int("id", id).
			Int("partition", int64(r.Partition)).Int("offset", r.Offset))
		return
	}
	code, name := ErrorName(err)
	if w.isFatal(err) && !w.fatal.Swap(true) {
		w.out.Print(NewEvent("fatal").Int("code", code).Str("name", name).Str("text", err.Error()))
	}
	w.mu.Lock()
	refused := w.refused[id]
	w.mu.Unlock()
	w.out.Outcome(id, NewEvent("error").Int("id", id).Int("partition", int64(r.Partition)).
		Int("code", code).Str("name", name).Str("text", err.Error()).
		Str("status", w.status(err, refused)).Bool("fatal", w.fatal.Load()))
}

// waitUntil sleeps to dueUs after start; false if the close time came
// first. With dueUs < 0 it waits for the close time alone.
func (w *Workload) waitUntil(dueUs int64) bool {
	var dueC <-chan time.Time
	if dueUs >= 0 {
		d := time.Duration(dueUs-nowUs()) * time.Microsecond
		if d <= 0 {
			return !w.isStopped()
		}
		t := time.NewTimer(d)
		defer t.Stop()
		dueC = t.C
	}
	select {
	case <-dueC:
		return !w.isStopped()
	case <-w.stopC:
		return false
	}
}

func (w *Workload) isStopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped
}

// burst produces ids [first, last] on the producer goroutines (or on this
// one when there is one) and returns once every one was handed over; false
// if the close time came first.
func (w *Workload) burst(first, last int64, calls []chan []int64, done *sync.WaitGroup) bool {
	if len(calls) == 0 {
		for id := first; id <= last; id++ {
			if !w.produce(id, 0) {
				return false
			}
		}
		return true
	}
	share := make([][]int64, len(calls))
	for id := first; id <= last; id++ {
		g := (id - 1) % int64(len(calls))
		share[g] = append(share[g], id)
	}
	for g, ids := range share {
		if len(ids) > 0 {
			done.Add(1)
			calls[g] <- ids
		}
	}
	done.Wait()
	return !w.isStopped()
}

// producer is goroutine `call` of concurrent_producers: its share of each
// burst, in id order.
func (w *Workload) producer(call int, ids <-chan []int64, done *sync.WaitGroup) {
	for share := range ids {
		for _, id := range share {
			if !w.produce(id, call) {
				break
			}
		}
		done.Done()
	}
}

// Run produces in bursts as the model's application does (prodsim's
// scenarios/runner.cc Application): the first burst once the client
// exists, each next one interval_us after the previous one was handed over.
func (w *Workload) Run() {
	var calls []chan []int64
	var done sync.WaitGroup
	if n := w.s.concurrentProducers; n > 1 {
		for g := 0; g < n; g++ {
			calls = append(calls, make(chan []int64, 1))
			go w.producer(g, calls[g], &done)
		}
		defer func() {
			for _, c := range calls {
				close(c)
			}
		}()
	}
	id := int64(1)
	for b := int64(0); id <= w.job.Messages; b++ {
		if b > 0 && !w.waitUntil(nowUs()+w.job.IntervalUs) {
			return
		}
		last := min(id+w.job.Burst-1, w.job.Messages)
		if !w.burst(id, last, calls, &done) {
			return
		}
		id = last + 1
	}
	if w.job.CloseAtUs >= 0 {
		w.waitUntil(-1)
	}
}

// Close is the protocol's closing: flush, else Close (kgo's purge), then
// "closed".
func (w *Workload) Close() {
	w.out.Print(NewEvent("closing").Int("outstanding", w.out.Outstanding()))
	ctx, cancel := context.WithTimeout(context.Background(),
		time.Duration(w.job.FlushTimeoutMs)*time.Millisecond)
	err := w.cl.Flush(ctx)
	cancel()
	// Flush returns once kgo has finished every record; its promises may
	// still be on their way to the promise goroutine.
	flushed := err == nil && w.out.WaitSettled(time.Now().Add(kPurgeWait))
	if !flushed {
		w.cl.Close()
		w.out.WaitSettled(time.Now().Add(kPurgeWait))
	}
	w.out.Closed(flushed)
	if flushed {
		w.cl.Close()
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

// ReadJob parses the job line and its settings.
func ReadJob(line []byte) (*Job, *Settings, error) {
	job, err := ParseJob(line)
	if err != nil {
		return nil, nil, err
	}
	s, err := NewSettings(job.Config)
	if err != nil {
		return nil, nil, err
	}
	return job, s, nil
}

// ClientOpts: the driver's own options, then the job's. extra: the
// caller's (simulated time's dialer).
func ClientOpts(job *Job, s *Settings, extra ...kgo.Opt) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(strings.Split(job.Bootstrap, ",")...),
		kgo.ClientID("prodsim-franz-go"),
		kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelInfo, func() string {
			return fmt.Sprintf("[kgo %d us] ", nowUs())
		})),
	}
	opts = append(opts, s.Opts()...)
	return append(opts, extra...)
}

// RunJob runs a parsed job to its end and gives the exit code; the caller
// has printed nothing yet.
func RunJob(job *Job, s *Settings, out *Output, extra ...kgo.Opt) int {
	opts := ClientOpts(job, s, extra...)
	s.noteIgnored()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		printJobError("kgo.NewClient: " + err.Error())
		return kExitJobError
	}
	start := NewEvent("start").Str("client", "franz-go").Str("version", kgoVersion)
	if s.concurrentProducers > 1 {
		start.Str("order", "per_call")
	}
	out.Print(start)
	w := &Workload{job: job, s: s, cl: cl, out: out, value: make([]byte, job.ValueBytes),
		stopC: make(chan struct{}), inside: map[int64]*inProduce{}, refused: map[int64]bool{}}
	for i := range w.value {
		w.value[i] = byte('a' + i%26)
	}
	if job.CloseAtUs >= 0 {
		d := time.Duration(job.CloseAtUs-nowUs()) * time.Microsecond
		time.AfterFunc(d, w.Stop) // a past due time fires at once
	}
	w.Run()
	w.Stop()
	w.Close()
	return kExitOk
}

func run() int {
	line, err := readJobLine()
	if err != nil {
		printJobError(err.Error())
		return kExitJobError
	}
	job, s, err := ReadJob(line)
	if err != nil {
		printJobError(err.Error())
		return kExitJobError
	}
	return RunJob(job, s, NewOutput(job.Messages))
}

func main() {
	signal.Ignore(syscall.SIGPIPE)
	if os.Getenv("PRODSIM_CLOCK") == "simulated" {
		os.Exit(RunSimulated())
	}
	os.Exit(run())
}

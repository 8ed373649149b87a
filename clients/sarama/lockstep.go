//go:build go1.25

// The build line raises this file's language version over the module's
// go 1.21 (testing/synctest is Go 1.25's); the module keeps 1.21's GODEBUG
// defaults for the wall clock, and RunSimulated sets what the bubble needs.

// Simulated time for prodsim-sarama: the lockstep protocol of
// clients/README.md ("Simulated time"), prodsim's scheduler the only clock.
//
// With PRODSIM_CLOCK=simulated the driver runs the same job (RunJob) inside
// a testing/synctest bubble, whose fake clock moves only when every
// goroutine in it is durably blocked. The process becomes a function of the
// job, PRODSIM_SEED and the step lines, but for the Go runtime's own
// choices (below).
//
//   - The bubble: synctest.Test needs a *testing.T, so RunSimulated runs one
//     test through testing.Main (no `go test` binary, no arguments) and the
//     test never returns: the job's end is os.Exit. os.Stdout is pointed at
//     stderr first, so that nothing the testing package prints reaches
//     prodsim; the protocol's lines go to the saved `stdout`.
//   - Sockets: Config.Net.Proxy (Enable, Dialer: the *Lockstep below; the
//     field exists in 1.42.1, 1.61.1, 1.62.0 and main, and every release
//     since 1.22 calls Dialer.Dial for every broker connection). A dial
//     prints {"dial":C,...} and waits, durably, for `connected` or
//     `closed`, for at most Net.DialTimeout (Sarama hands that timeout to
//     net.Dialer only, so a proxy dialer applies it itself); a simConn's
//     reads wait on channels and timers made in the bubble. Writes never
//     block: each is printed as it is made.
//   - stdin is read outside the bubble (real I/O is not durable blocking)
//     into a channel made outside it; the stepper (the bubble's first
//     goroutine) waits on that channel between steps. That wait is not
//     durable, so the bubble's clock cannot move between `idle` and the
//     next `step`, which is what the protocol asks.
//   - A step: time.Sleep to now_ns (the bubble fires every timer due on the
//     way, each at its own time, in time order), each input delivered and
//     followed by synctest.Wait (all other goroutines durably blocked: the
//     client has reacted to it), then the idle line.
//   - Two runtime internals, reached with go:linkname (build.sh links with
//     -checklinkname=0), make this work for Sarama:
//     1. sync.Mutex and sync.RWMutex waits count as durable in the bubble
//     (runtime.isIdleInSynctest). Sarama holds Broker.lock across a dial
//     (Open) and across a request's round trip (sendAndReceive), and
//     other goroutines wait for that lock (Broker.ResponseSize from
//     LeastLoadedBroker, Broker.Connected, Broker.AsyncProduce); to the
//     runtime those waits are not durable, so the bubble would never be
//     idle while a dial or a metadata request is pending, and neither
//     synctest.Wait nor the clock could move: the driver would hang. In
//     this process every lock a bubble goroutine takes is held by a
//     bubble goroutine (stdin's reader shares none), so a waiter is
//     blocked exactly as long as its holder, which is the durability
//     the bubble needs.
//     2. next_ns is the bubble's earliest timer (runtime (*timers).wakeTime
//     of the bubble's timer heap, found through internal/synctest's
//     acquire). Go 1.23+ keeps a channel timer in the heap only while a
//     goroutine waits on it, so this is the earliest time at which some
//     goroutine wakes: Sarama's retry backoffs, flush timer, metadata
//     refresh ticker, go-metrics' 5 s arbiter, the simConns' read
//     deadlines, the driver's own bursts and flush timeout. A self-test
//     at the start checks both against a known timer; if it fails (a Go
//     whose runtime differs), next_ns falls back to a 1 ms quantum
//     (kQuantum), said once on stderr.
//   - Randomness: the bubble's clock starts at 2000-01-01 UTC; the driver
//     sleeps PRODSIM_SEED mod 1 s before anything else, so Sarama's own
//     time-seeded generators (client.go's shuffle of the seed brokers,
//     partitioner.go's random partitioner, both rand.NewSource(
//     time.Now().UnixNano())) follow the seed; the global math/rand is
//     seeded with it (GODEBUG randseednop=0: Sarama's retry jitter in
//     utils.go since 1.45, admin's broker choice).
//   - What stays the runtime's: the order of goroutines made runnable at
//     one instant, select's choice among ready cases and map order (its
//     seeds come from the runtime's own entropy, which nothing can set).
//     GOMAXPROCS is 1, so one goroutine runs at a time and goroutine ids
//     follow creation order.
//   - go-metrics is off (metrics.UseNilMetrics): its meter arbiter waits
//     on a ticker made outside the bubble, which no bubble can wait on
//     durably. Sarama's metrics are observations only.
package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/IBM/sarama"
	"github.com/rcrowley/go-metrics"
)

const (
	kChunkBytes    = 262144 // a data or write line's decoded bytes, at most
	kLineBytesMax  = 1 << 20
	kQuantum       = time.Millisecond // next_ns without the timer heap
	kStdinLinesMax = 4096             // lines read ahead of the stepper
)

//go:linkname runtimeWaitReasonStrings runtime.waitReasonStrings
var runtimeWaitReasonStrings [1]string

//go:linkname runtimeIsIdleInSynctest runtime.isIdleInSynctest
var runtimeIsIdleInSynctest [1]bool

//go:linkname synctestAcquire internal/synctest.acquire
func synctestAcquire() any

//go:linkname synctestRelease internal/synctest.release
func synctestRelease(any)

//go:linkname timersWakeTime runtime.(*timers).wakeTime
func timersWakeTime(ts unsafe.Pointer) int64

// kWaitReasonsMax bounds the scan of runtime.waitReasonStrings (about 60
// entries in Go 1.26); the scan stops at the first empty name after index 0.
const kWaitReasonsMax = 256

// mutexWaitsDurable marks the runtime's mutex wait reasons as idle in a
// bubble; false if it did not find all three.
func mutexWaitsDurable() bool {
	names := unsafe.Slice(&runtimeWaitReasonStrings[0], kWaitReasonsMax)
	idle := unsafe.Slice(&runtimeIsIdleInSynctest[0], kWaitReasonsMax)
	found := 0
	for i := 1; i < kWaitReasonsMax && names[i] != ""; i++ {
		switch names[i] {
		case "sync.Mutex.Lock", "sync.RWMutex.RLock", "sync.RWMutex.Lock":
			idle[i] = true
			found++
		}
	}
	return found == 3
}

// bubbleTimers is the address of the current bubble's timer heap
// (runtime.synctestBubble: a runtime mutex, one word without lock ranking,
// then timers). REQUIRES: in a bubble.
func bubbleTimers() unsafe.Pointer {
	b := synctestAcquire()
	p := (*[2]unsafe.Pointer)(unsafe.Pointer(&b))[1] // the interface's data word
	synctestRelease(b)
	return unsafe.Add(p, unsafe.Sizeof(uintptr(0)))
}

// Lockstep is the driver's side of the protocol: the stepper's state and
// the connections. Its own fields are guarded by mu; lines go out through
// the Output, so they keep their order with the event lines.
type Lockstep struct {
	out    *Output
	config *sarama.Config // Net.DialTimeout
	timers unsafe.Pointer // nil: next_ns by kQuantum
	epoch  int64          // the bubble's UnixNano at simulated time 0

	mu    sync.Mutex
	next  int64 // the next connection id
	conns map[int64]*simConn
}

func (ls *Lockstep) nowNs() int64 { return time.Now().UnixNano() - ls.epoch }

func (ls *Lockstep) print(line string) { ls.out.Raw([]byte(line + "\n")) }

// NextNs is the idle line's next_ns: the bubble's earliest timer, after
// nowNs, or -1.
func (ls *Lockstep) NextNs(nowNs int64) int64 {
	if ls.timers == nil {
		return nowNs + int64(kQuantum)
	}
	when := timersWakeTime(ls.timers)
	if when == 0 {
		return -1
	}
	// A timer stopped or moved may leave a bound that is already past; a
	// step at the next nanosecond clears it.
	return max(when-ls.epoch, nowNs+1)
}

// RunAhead is the protocol's run-ahead: nothing can arrive before untilNs
// (-1: ever), so the timers due before it fire now, one instant at a time
// (each followed by synctest.Wait), until one of them makes the client
// print something, which prodsim must see at its own time. It gives where
// the clock stopped: nowNs, or that instant. Without the timer heap
// (kQuantum) it does not run ahead.
func (ls *Lockstep) RunAhead(nowNs, untilNs int64) int64 {
	stopped := nowNs
	for ls.timers != nil {
		next := ls.NextNs(stopped)
		if next < 0 || (untilNs >= 0 && next >= untilNs) {
			break
		}
		before := ls.out.Lines()
		time.Sleep(time.Duration(next - stopped))
		synctest.Wait()
		stopped = ls.nowNs()
		if ls.out.Lines() != before {
			break
		}
	}
	return stopped
}

// selfTest checks the timer heap's reading against a goroutine asleep for a
// known time. REQUIRES: in the bubble, no other goroutine of the driver's
// running yet.
func selfTest(timers unsafe.Pointer) bool {
	const d = 12345 * time.Nanosecond
	if timersWakeTime(timers) != 0 {
		return false
	}
	woke := make(chan struct{})
	go func() {
		time.Sleep(d)
		close(woke)
	}()
	synctest.Wait()
	ok := timersWakeTime(timers) == time.Now().Add(d).UnixNano()
	<-woke
	return ok && timersWakeTime(timers) == 0
}

func addr(host string, port int) *net.TCPAddr {
	ip := net.ParseIP(host)
	if ip == nil {
		ip = net.IPv4(127, 0, 0, 1)
	}
	return &net.TCPAddr{IP: ip, Port: port}
}

// Dial is sarama's proxy.Dialer: a connection through prodsim.
func (ls *Lockstep) Dial(network, address string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	ls.mu.Lock()
	ls.next++
	c := &simConn{ls: ls, id: ls.next, remote: addr(host, port),
		local: addr("127.0.0.1", 40000+int(ls.next%20000)), dialed: make(chan error, 1),
		wake: make(chan struct{})}
	ls.conns[c.id] = c
	ls.mu.Unlock()
	ls.print(fmt.Sprintf(`{"dial":%d,"host":%s,"port":%d}`, c.id, quote(host), port))
	var timeout <-chan time.Time
	if d := ls.config.Net.DialTimeout; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case err := <-c.dialed:
		if err != nil {
			return nil, err
		}
		return c, nil
	case <-timeout:
		// What net.Dialer says when its Timeout passes; prodsim forgets C.
		c.Abandon()
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: c.remote, Err: os.ErrDeadlineExceeded}
	}
}

// Deliver hands one input line to its connection. An id never dialled is
// prodsim's error.
func (ls *Lockstep) Deliver(in *stepInput) error {
	ls.mu.Lock()
	c := ls.conns[in.conn]
	ls.mu.Unlock()
	if c == nil {
		return fmt.Errorf("connection %d was never dialled", in.conn)
	}
	switch in.kind {
	case "connected":
		c.Connected()
	case "data":
		c.Data(in.bytes)
	case "closed":
		c.PeerClosed(in.how)
	}
	return nil
}

// simConn is one connection of the client, as a net.Conn. Reads wait on
// wake (closed and replaced whenever something changes) and on a timer for
// the read deadline, both made in the bubble: durable waits.
type simConn struct {
	ls            *Lockstep
	id            int64
	local, remote *net.TCPAddr
	dialed        chan error // the dial's answer, once

	mu         sync.Mutex
	answered   bool   // connected or closed came
	buf        []byte // bytes arrived, not yet read
	readErr    error  // what a read returns once buf is empty
	writeErr   error  // what a write returns
	dropWrites bool   // prodsim closed C in order: writes go nowhere
	closed     bool   // Close was called
	quiet      bool   // no close line: prodsim closed C, or the dial was abandoned
	readDL     time.Time
	wake       chan struct{}
}

// wakeLocked wakes every reader. REQUIRES: c.mu held.
func (c *simConn) wakeLocked() {
	close(c.wake)
	c.wake = make(chan struct{})
}

func (c *simConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.local, Addr: c.remote, Err: err}
}

func (c *simConn) Connected() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answered {
		return
	}
	c.answered = true
	c.dialed <- nil
}

func (c *simConn) Data(b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.readErr != nil {
		return
	}
	c.buf = append(c.buf, b...)
	c.wakeLocked()
}

// PeerClosed: prodsim's `closed` line. On a dial not yet answered it is
// the dial's failure.
func (c *simConn) PeerClosed(how string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.quiet = true
	if !c.answered {
		c.answered = true
		errno := syscall.ECONNREFUSED
		if how == "timeout" {
			errno = syscall.ETIMEDOUT
		}
		c.dialed <- &net.OpError{Op: "dial", Net: "tcp", Addr: c.remote,
			Err: os.NewSyscallError("connect", errno)}
		return
	}
	if c.readErr != nil {
		return
	}
	switch how {
	case "eof":
		c.readErr = io.EOF
		c.dropWrites = true
	default: // reset (refused and timeout come only before connected)
		c.readErr = c.opError("read", os.NewSyscallError("read", syscall.ECONNRESET))
		c.writeErr = c.opError("write", os.NewSyscallError("write", syscall.ECONNRESET))
		c.buf = nil // a reset discards what was not read
	}
	c.wakeLocked()
}

// Abandon: the dial timed out on the client's side; prodsim is told to
// forget C unless it closed C itself.
func (c *simConn) Abandon() {
	c.mu.Lock()
	quiet := c.quiet
	c.answered, c.closed, c.quiet = true, true, true
	c.mu.Unlock()
	if !quiet {
		c.ls.print(fmt.Sprintf(`{"close":%d}`, c.id))
	}
}

func (c *simConn) Read(p []byte) (int, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return 0, c.opError("read", net.ErrClosed)
		}
		if len(c.buf) > 0 {
			n := copy(p, c.buf)
			c.buf = c.buf[n:]
			c.mu.Unlock()
			return n, nil
		}
		if c.readErr != nil {
			err := c.readErr
			c.mu.Unlock()
			return 0, err
		}
		deadline, wake := c.readDL, c.wake
		c.mu.Unlock()
		var timeout <-chan time.Time
		var t *time.Timer
		if !deadline.IsZero() {
			d := time.Until(deadline)
			if d <= 0 {
				return 0, c.opError("read", os.ErrDeadlineExceeded)
			}
			t = time.NewTimer(d)
			timeout = t.C
		}
		select {
		case <-wake:
		case <-timeout:
		}
		if t != nil {
			t.Stop()
		}
	}
}

func (c *simConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return 0, c.opError("write", net.ErrClosed)
	case c.writeErr != nil:
		err := c.writeErr
		c.mu.Unlock()
		return 0, err
	case c.dropWrites:
		c.mu.Unlock()
		return len(p), nil
	}
	c.mu.Unlock()
	var b strings.Builder
	for at := 0; at < len(p); at += kChunkBytes {
		part := p[at:min(len(p), at+kChunkBytes)]
		fmt.Fprintf(&b, `{"write":%d,"bytes":"%s"}`+"\n", c.id, base64.StdEncoding.EncodeToString(part))
	}
	c.ls.out.Raw([]byte(b.String()))
	return len(p), nil
}

func (c *simConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return c.opError("close", net.ErrClosed)
	}
	c.closed = true
	quiet := c.quiet
	c.wakeLocked()
	c.mu.Unlock()
	if !quiet {
		c.ls.print(fmt.Sprintf(`{"close":%d}`, c.id))
	}
	return nil
}

func (c *simConn) LocalAddr() net.Addr  { return c.local }
func (c *simConn) RemoteAddr() net.Addr { return c.remote }
func (c *simConn) SetDeadline(t time.Time) error {
	return c.SetReadDeadline(t)
}
func (c *simConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readDL = t
	c.wakeLocked()
	return nil
}

// SetWriteDeadline: a write never blocks.
func (c *simConn) SetWriteDeadline(time.Time) error { return nil }

// stepInput is one line from prodsim.
type stepInput struct {
	kind  string // step, connected, data, closed
	conn  int64
	step  int64
	nowNs int64
	// untilNs: nothing arrives before it (-1: nothing will), so the driver
	// may run its timers ahead of now_ns up to it (runAhead: the step line
	// had the key).
	untilNs  int64
	runAhead bool
	bytes    []byte
	how      string
}

// ParseStepLine reads a lockstep line as strictly as prodsim reads the
// driver's: the keys in the protocol's order and nothing else.
func ParseStepLine(line []byte) (*stepInput, error) {
	bad := func(why string) error {
		text := string(line)
		if len(text) > 200 {
			text = text[:200]
		}
		return fmt.Errorf("lockstep: %s: %s", why, text)
	}
	dec := json.NewDecoder(strings.NewReader(string(line)))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, bad("not a JSON object")
	}
	var keys []string
	vals := map[string]any{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bad("not JSON")
		}
		key := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, bad("not JSON")
		}
		keys = append(keys, key)
		vals[key] = v
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, bad("not JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad("text after the object")
	}
	want := map[string][]string{"step": {"step", "now_ns", "until_ns"}, "connected": {"connected"},
		"data": {"data", "bytes"}, "closed": {"closed", "how"}}
	if len(keys) == 0 || strings.Join(keys, ",") != strings.Join(want[keys[0]], ",") {
		// A step without until_ns: the protocol before run-ahead.
		if strings.Join(keys, ",") != "step,now_ns" {
			return nil, bad("unexpected line")
		}
	}
	integer := func(key string) (int64, error) {
		n, ok := vals[key].(json.Number)
		if !ok || !integerText.MatchString(string(n)) {
			return 0, bad(key + " is not an integer")
		}
		v, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || v < 0 {
			return 0, bad(key + " is not a non-negative int64")
		}
		return v, nil
	}
	first, err := integer(keys[0])
	if err != nil {
		return nil, err
	}
	in := &stepInput{kind: keys[0], conn: first}
	switch in.kind {
	case "step":
		in.step, in.conn = first, 0
		if in.nowNs, err = integer("now_ns"); err != nil {
			return nil, err
		}
		in.untilNs = in.nowNs // no run-ahead
		if len(keys) == 3 {
			in.runAhead = true
			if n, ok := vals["until_ns"].(json.Number); ok && n == "-1" {
				in.untilNs = -1
			} else if in.untilNs, err = integer("until_ns"); err != nil {
				return nil, err
			} else if in.untilNs <= in.nowNs {
				return nil, bad("until_ns is not after now_ns")
			}
		}
	case "data":
		text, ok := vals["bytes"].(string)
		if !ok {
			return nil, bad("bytes is not a string")
		}
		if in.bytes, err = base64.StdEncoding.DecodeString(text); err != nil || len(in.bytes) > kChunkBytes {
			return nil, bad("bytes is not base64 of at most 262144 bytes")
		}
	case "closed":
		how, ok := vals["how"].(string)
		if !ok || (how != "reset" && how != "eof" && how != "refused" && how != "timeout") {
			return nil, bad("how is not reset, eof, refused or timeout")
		}
		in.how = how
	}
	return in, nil
}

// readLines sends stdin's lines to `lines` and closes it at EOF. It runs
// outside the bubble.
func readLines(lines chan<- []byte) {
	r := bufio.NewReaderSize(os.Stdin, 64<<10)
	for {
		var line []byte
		for {
			chunk, err := r.ReadSlice('\n')
			line = append(line, chunk...)
			if len(line) > kLineBytesMax+1 {
				fmt.Fprintf(os.Stderr, "prodsim-sarama: lockstep: a line longer than %d bytes\n", kLineBytesMax)
				os.Exit(1)
			}
			if err == nil {
				break
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				if len(line) > 0 {
					lines <- line
				}
				close(lines)
				return
			}
		}
		lines <- []byte(strings.TrimSuffix(string(line), "\n"))
	}
}

func lockstepFail(err error) {
	fmt.Fprintf(os.Stderr, "prodsim-sarama: %v\n", err)
	os.Exit(1)
}

// RunSimulated runs the job in lockstep (the file's comment). It returns
// only if the test machinery does; the job's end is an os.Exit.
func RunSimulated() int {
	seed, err := strconv.ParseUint(os.Getenv("PRODSIM_SEED"), 10, 64)
	if err != nil {
		lockstepFail(fmt.Errorf("lockstep: PRODSIM_SEED must be a decimal uint64: %v", err))
	}
	// synctest needs the timer channels of Go 1.23 (the module says go
	// 1.21); rand.Seed works again with randseednop=0.
	godebug := "asynctimerchan=0,randseednop=0"
	if old := os.Getenv("GODEBUG"); old != "" {
		godebug = old + "," + godebug
	}
	os.Setenv("GODEBUG", godebug)
	runtime.GOMAXPROCS(1)
	// go-metrics' meter arbiter ticks on a ticker made at its package's
	// init, outside the bubble: the goroutine it starts in the bubble would
	// wait on it, not durably, and the bubble would never be idle. Sarama's
	// metrics only observe; without them no arbiter starts.
	metrics.UseNilMetrics = true
	durable := mutexWaitsDurable()
	if !durable {
		fmt.Fprintln(os.Stderr, "prodsim-sarama: lockstep: this Go runtime has no mutex wait reasons to mark durable; a dial or a request holding a broker's lock will hang the driver")
	}
	stdout = os.Stdout
	os.Stdout = os.Stderr
	lines := make(chan []byte, kStdinLinesMax)
	go readLines(lines)
	body := func(t *testing.T) { lockstepBody(seed, lines) }
	testing.Main(func(pat, str string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: "TestLockstep", F: func(t *testing.T) { synctest.Test(t, body) }}},
		nil, nil)
	return 1
}

// lockstepBody is the bubble's first goroutine: it reads the job, then
// runs the steps.
func lockstepBody(seed uint64, lines <-chan []byte) {
	rand.Seed(int64(seed))
	time.Sleep(time.Duration(seed % uint64(time.Second)))
	ls := &Lockstep{conns: map[int64]*simConn{}}
	if timers := bubbleTimers(); selfTest(timers) { // moves the clock 12345 ns
		ls.timers = timers
	} else {
		fmt.Fprintf(os.Stderr, "prodsim-sarama: lockstep: the bubble's timers cannot be read on this Go; next_ns is now + %v\n", kQuantum)
	}
	start = time.Now()
	ls.epoch = start.UnixNano()
	jobLine, ok := <-lines
	if !ok {
		printJobError("no job line on stdin")
		os.Exit(kExitJobError)
	}
	job, config, err := ReadJob(jobLine)
	if err != nil {
		printJobError(err.Error())
		os.Exit(kExitJobError)
	}
	out := NewOutput(job.Messages)
	ls.out, ls.config = out, config
	config.Net.Proxy.Enable = true
	config.Net.Proxy.Dialer = ls
	scrubStackArguments = true
	var inputs []*stepInput
	for want := int64(0); ; {
		line, ok := <-lines
		if !ok {
			os.Exit(kExitOk) // prodsim is done with the driver
		}
		in, err := ParseStepLine(line)
		if err != nil {
			lockstepFail(err)
		}
		if in.kind != "step" {
			inputs = append(inputs, in)
			continue
		}
		if in.step != want {
			lockstepFail(fmt.Errorf("lockstep: step %d, expected %d", in.step, want))
		}
		now := ls.nowNs()
		if in.nowNs < now {
			lockstepFail(fmt.Errorf("lockstep: step %d goes back in time (%d < %d)", in.step, in.nowNs, now))
		}
		time.Sleep(time.Duration(in.nowNs - now))
		if in.step == 0 {
			go func() { os.Exit(RunJob(job, config, out)) }()
		}
		for _, input := range inputs {
			if err := ls.Deliver(input); err != nil {
				lockstepFail(err)
			}
			synctest.Wait()
		}
		inputs = inputs[:0]
		synctest.Wait()
		if !in.runAhead {
			ls.print(fmt.Sprintf(`{"idle":%d,"next_ns":%d}`, in.step, ls.NextNs(in.nowNs)))
		} else {
			stopped := ls.RunAhead(in.nowNs, in.untilNs)
			ls.print(fmt.Sprintf(`{"idle":%d,"now_ns":%d,"next_ns":%d}`, in.step, stopped, ls.NextNs(stopped)))
		}
		want++
	}
}

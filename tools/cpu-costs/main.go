// Command cpu-costs measures, on the machine it runs on, the CPU cost of the
// operation classes prodsim charges, using real Go and real Sarama code:
//
//	chan_*          channel handoffs between goroutines (and a buffered op)
//	goroutine_wake  a blocked goroutine being woken and run
//	message_*       Sarama's request path without a response: build a
//	                ProduceRequest v7 (RecordBatch + Records) and send it with
//	                Broker.Produce, RequiredAcks=NoResponse (encode + 1 write)
//	response_*      the same with acks=1 against a fake broker that answers a
//	                ProduceResponse v7; minus the NoResponse cost = receive side
//	syscall_*       a 200-byte write / read on a loopback TCP socket
//
// The fake broker runs in a child process (this binary with -sink), so the
// process CPU time reported here (getrusage) is the client's alone. Every
// class is timed 5 times; one line per class: `class value_ns note`, value =
// median wall ns, the note gives min, median process-CPU ns and GOMAXPROCS.
// Everything runs with the default GOMAXPROCS, then again with GOMAXPROCS=1.
//
// Run: tools/cpu-costs/run.sh VERSION | --checkout DIR  (builds in module mode).
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"syscall"
	"time"

	"github.com/IBM/sarama"
)

const reps = 5

var target = flag.Duration("t", 300*time.Millisecond, "time per repetition")

func cpuNow() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// timer accumulates wall and process-CPU time between Start and Stop.
type timer struct {
	wall, cpu int64
	w0, c0    int64
}

func (t *timer) Start() { t.w0, t.c0 = time.Now().UnixNano(), cpuNow() }
func (t *timer) Stop() {
	t.wall += time.Now().UnixNano() - t.w0
	t.cpu += cpuNow() - t.c0
}

// measure calibrates n so one call of f(n) takes about *target, then times it
// reps times; per = operations per iteration (the divisor).
func measure(f func(n int, t *timer)) (wall, cpu []float64) {
	n := 1
	for {
		t := &timer{}
		t.Start()
		f(n, t)
		t.Stop()
		if t.wall > int64(*target)/10 || n > 1<<30 {
			n = int(float64(n) * float64(*target) / float64(t.wall+1))
			break
		}
		n *= 4
	}
	if n < 1 {
		n = 1
	}
	for r := 0; r < reps; r++ {
		runtime.GC()
		t := &timer{}
		t.Start()
		f(n, t)
		t.Stop()
		wall = append(wall, float64(t.wall)/float64(n))
		cpu = append(cpu, float64(t.cpu)/float64(n))
	}
	return
}

func minMed(v []float64) (float64, float64) {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[0], s[len(s)/2]
}

type stats struct{ wmin, wmed, cmin, cmed float64 }

// report prints a class line and returns its ns per op (wall min and median,
// process CPU min and median).
func report(class string, per float64, note string, f func(n int, t *timer)) stats {
	wall, cpu := measure(f)
	wmin, wmed := minMed(wall)
	cmin, cmed := minMed(cpu)
	fmt.Printf("%s %.1f min=%.1f cpu_med=%.1f gomaxprocs=%d %s\n", class, wmed/per,
		wmin/per, cmed/per, runtime.GOMAXPROCS(0), note)
	return stats{wmin / per, wmed / per, cmin / per, cmed / per}
}

func derived(class string, v float64, note string) {
	fmt.Printf("%s %.1f gomaxprocs=%d %s\n", class, v, runtime.GOMAXPROCS(0), note)
}

// --- the fake broker (child process) ---------------------------------------

// sink listens on two ports: a Kafka one that reads Produce requests and
// answers those with acks != 0 with a ProduceResponse v7, and a discard one.
// It exits when its stdin closes (the parent exited).
func sink() {
	kl, err1 := net.Listen("tcp", "127.0.0.1:0")
	dl, err2 := net.Listen("tcp", "127.0.0.1:0")
	if err1 != nil || err2 != nil {
		die("sink:", err1, err2)
	}
	fmt.Println(kl.Addr(), dl.Addr())
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); os.Exit(0) }()
	go accept(dl, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
	accept(kl, serveKafka)
}

func accept(l net.Listener, h func(net.Conn)) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() { h(c); c.Close() }()
	}
}

func serveKafka(c net.Conn) {
	r := bufio.NewReaderSize(c, 1<<16)
	// ProduceResponse v7, header v0: size, correlation id, one topic "t",
	// one partition 0: error 0, base offset, log append time -1,
	// log start offset 0; throttle time 0.
	resp := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 1,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 42, 255, 255, 255, 255, 255, 255,
		255, 255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(resp, uint32(len(resp)-4))
	var hdr [4]byte
	buf := make([]byte, 1<<20)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		size := int(binary.BigEndian.Uint32(hdr[:]))
		if size > len(buf) {
			buf = make([]byte, size)
		}
		b := buf[:size]
		if _, err := io.ReadFull(r, b); err != nil {
			return
		}
		// Header v1: api key, api version, correlation id, client id; body
		// v7: transactional id (nullable string), acks.
		cid := int(int16(binary.BigEndian.Uint16(b[8:])))
		p := 10 + max0(cid)
		tid := int(int16(binary.BigEndian.Uint16(b[p:])))
		p += 2 + max0(tid)
		if acks := int16(binary.BigEndian.Uint16(b[p:])); acks != 0 {
			copy(resp[4:8], b[4:8])
			if _, err := c.Write(resp); err != nil {
				return
			}
		}
	}
}

func max0(x int) int {
	if x < 0 {
		return 0
	}
	return x
}

// --- the client side ---------------------------------------------------------

func produce(b *sarama.Broker, acks sarama.RequiredAcks, msgs, size int) func(int, *timer) {
	val := make([]byte, size)
	return func(n int, _ *timer) {
		for i := 0; i < n; i++ {
			now := time.Now()
			recs := make([]*sarama.Record, msgs)
			for j := range recs {
				recs[j] = &sarama.Record{Value: val, OffsetDelta: int64(j)}
			}
			req := &sarama.ProduceRequest{RequiredAcks: acks, Timeout: 10000, Version: 7}
			req.AddBatch("t", 0, &sarama.RecordBatch{Version: 2, FirstTimestamp: now,
				MaxTimestamp: now, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
				LastOffsetDelta: int32(msgs - 1), Records: recs})
			res, err := b.Produce(req)
			if err != nil || (acks != sarama.NoResponse && res == nil) {
				die("produce:", err)
			}
		}
	}
}

// pingPong bounces a value between two goroutines over channels of capacity
// c; each side blocks on its receive, so every one-way trip wakes a goroutine.
func pingPong(c int) func(int, *timer) {
	return func(n int, _ *timer) {
		ping, pong := make(chan int, c), make(chan int, c)
		go func() {
			for v := range ping {
				pong <- v
			}
		}()
		for i := 0; i < n; i++ {
			ping <- i
			<-pong
		}
		close(ping)
	}
}

func run(kafkaAddr, discardAddr string) {
	// 1, 2: channels and goroutine wake-up.
	report("chan_handoff_unbuffered", 2, "one-way send->recv, ping-pong of 2 goroutines", pingPong(0))
	report("chan_op_buffered", 2, "one send or recv on a buffered chan, never blocks", func(n int, _ *timer) {
		c := make(chan int, 1)
		for i := 0; i < n; i++ {
			c <- i
			<-c
		}
	})
	report("goroutine_wake", 2, "one-way, cap-1 chans: receiver blocked, woken, run", pingPong(1))

	// 3, 4: Sarama's Broker.Produce against the fake broker.
	conf := sarama.NewConfig()
	conf.Version = sarama.V2_1_0_0
	br := sarama.NewBroker(kafkaAddr)
	if err := br.Open(conf); err != nil {
		die("open:", err)
	}
	if ok, err := br.Connected(); !ok {
		die("connect:", err)
	}
	defer br.Close()
	var xs []float64
	var st []stats
	for _, m := range []int{1, 10, 100} {
		st = append(st, report(fmt.Sprintf("message_req_%dx100B", m), 1,
			"per request: build + encode + 1 write, acks=0", produce(br, sarama.NoResponse, m, 100)))
		xs = append(xs, float64(m))
	}
	k := report("message_req_100x1000B", 1, "per request, acks=0", produce(br, sarama.NoResponse, 100, 1000))
	col := func(g func(stats) float64) (y []float64) {
		for _, s := range st {
			y = append(y, g(s))
		}
		return
	}
	a, b := fit(xs, col(func(s stats) float64 { return s.wmed }))
	amin, bmin := fit(xs, col(func(s stats) float64 { return s.wmin }))
	ac, bc := fit(xs, col(func(s stats) float64 { return s.cmed }))
	derived("message_fit_request", a, fmt.Sprintf("fixed per request (fit of medians); fit of mins=%.1f, cpu=%.1f", amin, ac))
	derived("message_fit_per_msg", b, fmt.Sprintf("per 100B message (fit of medians); fit of mins=%.1f, cpu=%.1f", bmin, bc))
	derived("message_per_byte", (k.wmed-st[2].wmed)/(100*900), fmt.Sprintf("per value byte (medians); mins=%.2f, cpu=%.2f",
		(k.wmin-st[2].wmin)/(100*900), (k.cmed-st[2].cmed)/(100*900)))
	r := report("response_rtt_1x100B", 1, "Produce acks=1 round trip (incl. fake broker + loopback)",
		produce(br, sarama.WaitForLocal, 1, 100))
	derived("response_recv", r.wmed-st[0].wmed, fmt.Sprintf("rtt minus acks=0 send (medians); mins=%.1f, client cpu=%.1f",
		r.wmin-st[0].wmin, r.cmed-st[0].cmed))

	// 5: syscalls on loopback TCP.
	dc, err := net.Dial("tcp", discardAddr)
	if err != nil {
		die("dial:", err)
	}
	defer dc.Close()
	msg := make([]byte, 200)
	report("syscall_write_200B", 1, "net.Conn.Write to loopback TCP (reader in other process)", func(n int, _ *timer) {
		for i := 0; i < n; i++ {
			if _, err := dc.Write(msg); err != nil {
				die("write:", err)
			}
		}
	})
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	wc, _ := net.Dial("tcp", l.Addr().String())
	rc2, _ := l.Accept()
	l.Close()
	defer wc.Close()
	defer rc2.Close()
	const chunk = 128 // 25.6 kB in flight: fits the loopback socket buffer
	big := make([]byte, chunk*200)
	report("syscall_read_200B", 1, "net.Conn.Read of 200 B already buffered (untimed writer)", func(n int, t *timer) {
		for i := 0; i < n; i += chunk {
			t.Stop()
			if _, err := wc.Write(big); err != nil {
				die("write:", err)
			}
			time.Sleep(50 * time.Microsecond) // let loopback deliver it
			t.Start()
			for k := 0; k < chunk && i+k < n; k++ {
				if _, err := io.ReadFull(rc2, msg); err != nil {
					die("read:", err)
				}
			}
			t.Stop()
			for k := n - i; k < chunk; k++ { // drain the tail untimed
				_, _ = io.ReadFull(rc2, msg)
			}
			t.Start()
		}
	})
}

// fit is an ordinary least-squares fit y = a + b*x.
func fit(x, y []float64) (a, b float64) {
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx, sy, sxx, sxy = sx+x[i], sy+y[i], sxx+x[i]*x[i], sxy+x[i]*y[i]
	}
	k := float64(len(x))
	b = (k*sxy - sx*sy) / (k*sxx - sx*sx)
	return (sy - b*sx) / k, b
}

func main() {
	isSink := flag.Bool("sink", false, "run as the fake broker (internal)")
	flag.Parse()
	if *isSink {
		sink()
		return
	}
	cmd := exec.Command(os.Args[0], "-sink")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		die("sink:", err)
	}
	var ka, da string
	if _, err := fmt.Fscan(stdout, &ka, &da); err != nil {
		die("sink addr:", err)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("# cpu-costs: %s, sarama %s, nproc %d, %s, loadavg %s", runtime.Version(), saramaVersion,
		runtime.NumCPU(), time.Now().UTC().Format(time.RFC3339), load)
	def := runtime.GOMAXPROCS(0)
	for _, p := range []int{def, 1} {
		runtime.GOMAXPROCS(p)
		run(ka, da)
	}
	stdin.Close()
	_ = cmd.Wait()
}

var saramaVersion = "unknown"

func die(v ...interface{}) { fmt.Fprintln(os.Stderr, v...); os.Exit(1) }

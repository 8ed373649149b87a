// The goroutine report (clients/README.md, "The goroutine report"): after
// Close has returned, which of Sarama's goroutines are still alive.
//
// Sarama's own tests check this with goleak (async_producer_test.go at
// main); a service that makes and closes producers for its lifetime leaks
// memory and connections otherwise. The driver cannot use goleak (not in
// Debian), so it reads runtime.Stack(all) the way goleak does: a goroutine
// is Sarama's when a frame of its stack is a function of the Sarama
// package, and it is named by the topmost such frame (the one it is stuck
// in, e.g. "(*Broker).responseReceiver"). Goroutines that only Sarama's
// dependencies run are not Sarama's: go-metrics' meter arbiter lives for
// the process by design (goleak.IgnoreTopFunction in Sarama's own tests).
//
// Some of Sarama's goroutines return a moment after Close (a broker's
// receiver after its connection is closed, the shutdown goroutine after
// it closes the channels), so the driver polls until none is left or
// kGoroutineWait has passed, and reports what is left then.
package main

import (
	"reflect"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/IBM/sarama"
)

const (
	kGoroutineWait     = 2 * time.Second
	kGoroutinePoll     = 10 * time.Millisecond
	kStackDumpBytesMax = 64 << 20 // a dump larger than this is cut (and so is its last goroutine)
)

// saramaPrefix prefixes every Sarama function in a stack: the package's
// import path (which build.sh chooses) and a dot.
var saramaPrefix = reflect.TypeOf(sarama.Broker{}).PkgPath() + "."

// scrubStackArguments: in simulated time (lockstep.go) a stack's argument
// values (pointers, which the allocator places where it will) are printed
// as "...", its goroutine ids as "goroutine N", and goroutine_id is the
// goroutine's rank by id among the client's goroutines (1: the oldest),
// so that the report is the same line in every replay: Go hands out ids in
// batches per P and to the runtime's own goroutines (the GC's workers start
// at the first collection, whose moment depends on the heap), so the
// numbers themselves differ between replays.
var scrubStackArguments = false

// goroutineNumber is a goroutine's id in a stack's text ("goroutine 43 [",
// "in goroutine 42").
var goroutineNumber = regexp.MustCompile(`goroutine [0-9]+`)

// ScrubArguments replaces the argument list of each function line of a
// stack with "...": "pkg.(*T).f(0xc0001, 0x2)" -> "pkg.(*T).f(...)".
func ScrubArguments(stack string) string {
	lines := strings.Split(stack, "\n")
	for i, l := range lines {
		if f := frameFunction(l); f != "" && f != l && strings.HasSuffix(l, ")") {
			lines[i] = f + "(...)"
		}
	}
	return strings.Join(lines, "\n")
}

// Survivor is one function Sarama goroutines are stuck in: how many, the
// state of the first one as the runtime names it ("chan receive",
// "select", "sleep", ...), its goroutine id, and its stack as Go prints it.
type Survivor struct {
	Function string
	State    string
	ID       int64
	Count    int64
	Stack    string
}

// stackDump is runtime.Stack of every goroutine, grown until it fits.
func stackDump() string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) || len(buf) >= kStackDumpBytesMax {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// frameFunction is the function of a stack's function line
// ("pkg.(*T).f(0xc0001, ...)" -> "pkg.(*T).f"), or "" for any other line
// (a file line starts with a tab; "created by" names the creator, which
// is not where the goroutine is).
func frameFunction(line string) string {
	if line == "" || line[0] == '\t' || strings.HasPrefix(line, "created by ") {
		return ""
	}
	// The arguments are the last parenthesis: a receiver's "(*T)" comes
	// before them, and Go prints no parenthesis inside them.
	if open := strings.LastIndexByte(line, '('); open > 0 {
		return line[:open]
	}
	return line
}

// ParseSurvivors groups the goroutines of `dump` (runtime.Stack(all)'s
// text) that have a frame whose function starts with `prefix` by their
// topmost such function, sorted by function.
func ParseSurvivors(dump, prefix string) []Survivor {
	byFunction := map[string]*Survivor{}
	var ids []int64 // every goroutine of prefix's, in the dump's order
	for _, block := range strings.Split(dump, "\n\n") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		// "goroutine 18 [chan receive, 2 minutes]:"
		header := lines[0]
		if !strings.HasPrefix(header, "goroutine ") {
			continue
		}
		open, end := strings.IndexByte(header, '['), strings.LastIndexByte(header, ']')
		if open < 0 || end < open {
			continue
		}
		id, _ := strconv.ParseInt(strings.TrimSpace(header[len("goroutine "):open]), 10, 64)
		state := header[open+1 : end]
		if comma := strings.IndexByte(state, ','); comma >= 0 {
			state = state[:comma] // the wait's duration, "locked to thread"
		}
		// A synctest bubble's durable waits ("chan receive (durable)") are
		// the same waits as outside one.
		state = strings.TrimSuffix(state, " (durable)")
		top := ""
		for _, l := range lines[1:] {
			if f := frameFunction(l); strings.HasPrefix(f, prefix) {
				top = strings.TrimPrefix(f, prefix)
				break
			}
		}
		if top == "" {
			continue
		}
		ids = append(ids, id)
		if s, ok := byFunction[top]; ok {
			s.Count++
			continue
		}
		stack := strings.TrimSpace(block)
		if scrubStackArguments {
			stack = ScrubArguments(stack)
		}
		byFunction[top] = &Survivor{Function: top, State: state, ID: id, Count: 1, Stack: stack}
	}
	out := make([]Survivor, 0, len(byFunction))
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, s := range byFunction {
		if scrubStackArguments {
			s.ID = int64(sort.Search(len(ids), func(i int) bool { return ids[i] >= s.ID })) + 1
			s.Stack = goroutineNumber.ReplaceAllString(s.Stack, "goroutine N")
		}
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Function < out[j].Function })
	return out
}

// Survivors waits up to `wait` for the goroutines with a frame of
// `prefix` to return, and gives those still alive then, with how long it
// waited.
func Survivors(prefix string, wait time.Duration) ([]Survivor, time.Duration) {
	begin := time.Now()
	for {
		left := ParseSurvivors(stackDump(), prefix)
		waited := time.Since(begin)
		if len(left) == 0 || waited >= wait {
			return left, waited
		}
		time.Sleep(kGoroutinePoll)
	}
}

// ReportGoroutines prints the goroutine report: a "goroutine" line per
// function Sarama goroutines are stuck in, then one "goroutines" line.
func ReportGoroutines(out *Output) {
	left, waited := Survivors(saramaPrefix, kGoroutineWait)
	alive := int64(0)
	for _, s := range left {
		alive += s.Count
		out.PrintAfterClosed(NewEvent("goroutine").Str("function", s.Function).
			Int("count", s.Count).Str("state", s.State).Int("goroutine_id", s.ID).
			Str("stack", s.Stack))
	}
	out.PrintAfterClosed(NewEvent("goroutines").Int("alive", alive).
		Int("waited_us", waited.Microseconds()))
}

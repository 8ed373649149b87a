// Tests of the goroutine report's reading of a stack dump; run by build.sh
// before it links the driver.
package main

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// A dump as Go 1.19 prints it, trimmed: a leaked receiver, a second one, a
// goroutine of a dependency only Sarama created, and the dumping one.
const dump = `goroutine 1 [running]:
main.stackDump()
	prodsim/clients/sarama/goroutines.go:52 +0x65
main.main()
	prodsim/clients/sarama/main.go:470 +0x19

goroutine 34 [chan receive, 2 minutes]:
github.com/IBM/sarama.(*Broker).responseReceiver(0xc0001e2000)
	github.com/IBM/sarama/broker.go:1163 +0x65
github.com/IBM/sarama.withRecover(0xc000112f90?)
	github.com/IBM/sarama/utils.go:43 +0x3e
created by github.com/IBM/sarama.(*Broker).Open.func1
	github.com/IBM/sarama/broker.go:253 +0x8d6

goroutine 12 [select]:
github.com/rcrowley/go-metrics.(*meterArbiter).tick(0xb1e1a0)
	github.com/rcrowley/go-metrics/meter.go:239 +0x85
created by github.com/IBM/sarama.(*Broker).Open.func1
	github.com/IBM/sarama/broker.go:220 +0x3b7

goroutine 40 [chan receive]:
github.com/IBM/sarama.(*Broker).responseReceiver(0xc0001e2900)
	github.com/IBM/sarama/broker.go:1163 +0x65
github.com/IBM/sarama.withRecover(0x0?)
	github.com/IBM/sarama/utils.go:43 +0x3e
created by github.com/IBM/sarama.(*Broker).Open.func1
	github.com/IBM/sarama/broker.go:253 +0x8d6

goroutine 41 [IO wait]:
internal/poll.runtime_pollWait(0x7f, 0x72)
	runtime/netpoll.go:305 +0x89
net.(*conn).Read(0xc00012c008, {0xc0002b4000?, 0x10?, 0x10?})
	net/net.go:183 +0x45
github.com/IBM/sarama.(*bufConn).Read(...)
	github.com/IBM/sarama/broker.go:1660
`

// The goal: goroutines are named by their topmost Sarama frame and
// counted; one that only a Sarama frame created is not Sarama's.
func TestParseSurvivors(t *testing.T) {
	got := ParseSurvivors(dump, "github.com/IBM/sarama.")
	if len(got) != 2 {
		t.Fatalf("want 2 functions, got %+v", got)
	}
	r := got[0]
	if r.Function != "(*Broker).responseReceiver" || r.Count != 2 || r.State != "chan receive" ||
		r.ID != 34 || !strings.HasPrefix(r.Stack, "goroutine 34 [chan receive, 2 minutes]:") ||
		!strings.Contains(r.Stack, "broker.go:1163") {
		t.Fatalf("the receivers: got %+v", r)
	}
	if got[1].Function != "(*bufConn).Read" || got[1].State != "IO wait" || got[1].Count != 1 {
		t.Fatalf("the reader: got %+v", got[1])
	}
	if len(ParseSurvivors(dump, "github.com/Shopify/sarama.")) != 0 {
		t.Fatal("another import path's functions were taken for Sarama's")
	}
}

func blockedForever(c chan struct{}) { <-c }
func exitsSoon()                     { time.Sleep(30 * time.Millisecond) }

// The goal (a canary on the live runtime): a goroutine that returns within
// the wait is not reported, one that stays blocked is, by name and state.
func TestSurvivorsLive(t *testing.T) {
	c := make(chan struct{})
	defer close(c)
	go blockedForever(c)
	go exitsSoon()
	// This package's path: "main" in the driver, its import path in a test.
	left, waited := Survivors(reflect.TypeOf(Survivor{}).PkgPath()+".", 500*time.Millisecond)
	names := []string{}
	for _, s := range left {
		names = append(names, s.Function+"/"+s.State)
	}
	joined := strings.Join(names, " ")
	if !strings.Contains(joined, "blockedForever/chan receive") {
		t.Fatalf("the blocked goroutine was not reported: %v", names)
	}
	if strings.Contains(joined, "exitsSoon") {
		t.Fatalf("a goroutine that returned within the wait was reported: %v", names)
	}
	if waited < 500*time.Millisecond {
		t.Fatalf("gave up after %v, before the wait", waited)
	}
}

//go:build go1.25

package main

import (
	"strings"
	"testing"
)

// The lockstep lines prodsim writes are read as strictly as prodsim reads
// the driver's.
func TestParseStepLine(t *testing.T) {
	good := map[string]stepInput{
		`{"step":0,"now_ns":0}`:                {kind: "step"},
		`{"step":7,"now_ns":5000000}`:          {kind: "step", step: 7, nowNs: 5000000},
		`{"connected":3}`:                      {kind: "connected", conn: 3},
		`{"data":3,"bytes":"AAEC"}`:            {kind: "data", conn: 3, bytes: []byte{0, 1, 2}},
		`{"closed":3,"how":"reset"}`:           {kind: "closed", conn: 3, how: "reset"},
		`{"closed":12,"how":"timeout"}`:        {kind: "closed", conn: 12, how: "timeout"},
		` {"closed":1, "how":"eof"} `:          {kind: "closed", conn: 1, how: "eof"},
		`{"data":1,"bytes":""}`:                {kind: "data", conn: 1, bytes: []byte{}},
		`{"step":1,"now_ns":9007199254740993}`: {kind: "step", step: 1, nowNs: 9007199254740993},
	}
	for line, want := range good {
		got, err := ParseStepLine([]byte(line))
		if err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		if got.kind != want.kind || got.conn != want.conn || got.step != want.step ||
			got.nowNs != want.nowNs || got.runAhead != want.runAhead ||
			(got.runAhead && got.untilNs != want.untilNs) || got.how != want.how || string(got.bytes) != string(want.bytes) {
			t.Errorf("%s: got %+v, want %+v", line, *got, want)
		}
	}
	bad := []string{
		``, `[]`, `{}`, `{"now_ns":0,"step":0}`, `{"step":0}`, `{"step":0,"now_ns":0,"x":1}`,
		`{"step":-1,"now_ns":0}`, `{"step":1.5,"now_ns":0}`, `{"step":"1","now_ns":0}`,
		`{"data":1,"bytes":"!!"}`, `{"closed":1,"how":"gone"}`, `{"connected":1}{}`,
		`{"dial":1,"host":"127.0.0.1","port":2}`, `{"step":01,"now_ns":0}`,
		`{"step":1,"now_ns":5,"until_ns":5}`, `{"step":1,"now_ns":5,"until_ns":-2}`,
		`{"step":1,"until_ns":9,"now_ns":5}`,
	}
	for _, line := range bad {
		if _, err := ParseStepLine([]byte(line)); err == nil {
			t.Errorf("%q: accepted", line)
		}
	}
	huge := `{"data":1,"bytes":"` + strings.Repeat("AAAA", 262144/3+1) + `"}`
	if _, err := ParseStepLine([]byte(huge)); err == nil {
		t.Errorf("a data line over 262144 bytes: accepted")
	}
}

// A stack's argument values are scrubbed, nothing else.
func TestScrubArguments(t *testing.T) {
	in := "goroutine 43 [chan receive]:\n" +
		"github.com/IBM/sarama.(*Broker).responseReceiver(0xc00003d400)\n" +
		"\t/x/broker.go:1163 +0x1a5\n" +
		"created by github.com/IBM/sarama.(*Broker).Open.func1 in goroutine 42\n" +
		"\t/x/broker.go:250 +0x1d0"
	want := "goroutine 43 [chan receive]:\n" +
		"github.com/IBM/sarama.(*Broker).responseReceiver(...)\n" +
		"\t/x/broker.go:1163 +0x1a5\n" +
		"created by github.com/IBM/sarama.(*Broker).Open.func1 in goroutine 42\n" +
		"\t/x/broker.go:250 +0x1d0"
	if got := ScrubArguments(in); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// Tests of the job parser (job.go), shared by the Go drivers: each driver's
// build.sh copies this directory beside its own sources, and runs them
// with its own tests before it links the driver.
package main

import (
	"strings"
	"testing"
)

const goodJob = `{"bootstrap":"127.0.0.1:1","topics":["t0","t1"],"messages":10,"keys":3,` +
	`"burst":2,"interval_us":1000,"value_bytes":5,"close_at_us":-1,"flush_timeout_ms":100,` +
	`"config":[["idempotent","true"],["net_max_open_requests","1"]]}`

// The goal: a well-formed job is read whole, in order.
func TestParseJobGood(t *testing.T) {
	job, err := ParseJob([]byte(" " + goodJob + " "))
	if err != nil {
		t.Fatal(err)
	}
	if job.Bootstrap != "127.0.0.1:1" || len(job.Topics) != 2 || job.Messages != 10 ||
		job.Keys != 3 || job.Burst != 2 || job.IntervalUs != 1000 || job.ValueBytes != 5 ||
		job.CloseAtUs != -1 || job.FlushTimeoutMs != 100 || len(job.Config) != 2 ||
		job.Config[1] != [2]string{"net_max_open_requests", "1"} {
		t.Fatalf("got %+v", job)
	}
}

// The goal: every way the protocol forbids is refused, with a reason.
func TestParseJobBad(t *testing.T) {
	cases := map[string]string{
		`"messages":10,`:             `"messages":1.0,`,
		`"keys":3,`:                  `"keys":03,`,
		`"burst":2,`:                 `"burst":0,`,
		`"topics":["t0","t1"],`:      `"topics":null,`,
		`"close_at_us":-1,`:          `"close_at_us":-2,`,
		`["idempotent","true"]`:      `["idempotent",null]`,
		`,"flush_timeout_ms":100`:    `,"flush_timeout_ms":100,"flush_timeout_ms":100`,
		`"bootstrap":"127.0.0.1:1",`: `"bootstrap":"127.0.0.1:1","extra":1,`,
		`"value_bytes":5,`:           ``,
		`"interval_us":1000,`:        `"interval_us":1e3,`,
	}
	for from, to := range cases {
		line := strings.Replace(goodJob, from, to, 1)
		if line == goodJob {
			t.Fatalf("case %q does not change the job", from)
		}
		if _, err := ParseJob([]byte(line)); err == nil {
			t.Errorf("accepted %s", line)
		}
	}
	for _, line := range []string{goodJob + "{}", goodJob + "x", "[]", "", "{"} {
		if _, err := ParseJob([]byte(line)); err == nil {
			t.Errorf("accepted %q", line)
		}
	}
}

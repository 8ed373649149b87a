// Tests of the settings and the error names; run by build.sh before it
// links the driver (with ../gojob's tests of the job parser).
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// newClient is kgo.NewClient on the settings (it validates, and does not
// connect).
func newClient(t *testing.T, s *Settings) error {
	t.Helper()
	job := &Job{Bootstrap: "127.0.0.1:1", Topics: []string{"t"}}
	cl, err := kgo.NewClient(ClientOpts(job, s)...)
	if err == nil {
		cl.Close()
	}
	return err
}

// The goal: every scenario field is taken (mapped or ignored), and the
// result is a client kgo accepts.
func TestScenarioNames(t *testing.T) {
	s, err := NewSettings([][2]string{
		{"idempotent", "true"}, {"net_max_open_requests", "1"}, {"net_read_timeout", "1500ms"},
		{"net_dial_timeout", "2000ms"}, {"required_acks", "-1"}, {"timeout", "3000ms"},
		{"retry_max", "7"}, {"retry_backoff", "10ms"}, {"return_successes", "true"},
		{"return_errors", "true"}, {"flush_messages", "4"}, {"flush_bytes", "1000"},
		{"flush_frequency", "5ms"}, {"flush_max_messages", "9"}, {"max_message_bytes", "2000"},
		{"channel_buffer_size", "16"}, {"metadata_retry_max", "2"},
		{"metadata_retry_backoff", "20ms"}, {"version", "2.1.0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !s.idempotent || s.acks != "all" || s.concurrentProducers != 1 {
		t.Errorf("got %+v", s)
	}
	if err := newClient(t, s); err != nil {
		t.Error(err)
	}
}

// The goal: Sarama's acks on kgo's idempotent default disable idempotence,
// unless idempotence was asked for; net_max_open_requests only binds a
// client that is not idempotent.
func TestScenarioAcksAndIdempotence(t *testing.T) {
	s, err := NewSettings([][2]string{{"required_acks", "1"}, {"net_max_open_requests", "5"}})
	if err != nil || s.idempotent || s.acks != "leader" {
		t.Fatalf("%v %+v", err, s)
	}
	if err := newClient(t, s); err != nil {
		t.Error(err)
	}
	s, err = NewSettings([][2]string{{"idempotent", "true"}, {"required_acks", "0"}})
	if err != nil || !s.idempotent {
		t.Fatalf("%v %+v", err, s)
	}
	if newClient(t, s) == nil {
		t.Error("kgo accepted idempotent with acks none")
	}
	s, err = NewSettings([][2]string{{"idempotent", "true"}, {"net_max_open_requests", "5"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := newClient(t, s); err != nil {
		t.Errorf("net_max_open_requests on an idempotent client: %v", err)
	}
}

// The goal: kgo's own names, as kgo takes them; kgo's refusals stay kgo's.
func TestKgoNames(t *testing.T) {
	pairs := [][2]string{
		{"RecordRetries", "3"}, {"RecordDeliveryTimeout", "5s"}, {"ProduceRequestTimeout", "2500ms"},
		{"ProducerLinger", "0s"}, {"MaxBufferedRecords", "100"}, {"RequiredAcks", "leader"},
		{"DisableIdempotentWrite", "true"}, {"ProducerBatchMaxBytes", "100000"},
		{"RetryBackoff", "50ms"}, {"RequestRetries", "4"}, {"ConnIdleTimeout", "20s"},
		{"MetadataMaxAge", "1m"}, {"MetadataMinAge", "1s"}, {"RequestTimeoutOverhead", "5s"},
		{"StopProducerOnDataLossDetected", "true"}, {"concurrent_producers", "4"},
	}
	if maxInflightOpt != nil {
		pairs = append(pairs, [2]string{"MaxProduceRequestsInflightPerBroker", "3"})
	}
	if dialTimeoutOpt != nil {
		pairs = append(pairs, [2]string{"DialTimeout", "3s"})
	}
	s, err := NewSettings(pairs)
	if err != nil {
		t.Fatal(err)
	}
	if s.idempotent || s.acks != "leader" || !s.stopOnDataLoss || s.concurrentProducers != 4 {
		t.Errorf("got %+v", s)
	}
	if err := newClient(t, s); err != nil {
		t.Error(err)
	}
	if maxInflightOpt != nil {
		s, _ = NewSettings([][2]string{{"MaxProduceRequestsInflightPerBroker", "3"}})
		if newClient(t, s) == nil {
			t.Error("kgo accepted 3 in flight on an idempotent client")
		}
	}
}

// The goal: refusals name the pair; options a release lacks say so.
func TestSettingsRefusals(t *testing.T) {
	for _, pair := range [][2]string{{"acks", "all"}, {"idempotent", "yes"}, {"retry_max", "1.5"},
		{"timeout", "10"}, {"required_acks", "2"}, {"RequiredAcks", "-1"},
		{"DisableIdempotentWrite", "1"}, {"concurrent_producers", "0"},
		{"StopProducerOnDataLossDetected", "false"}, {"RecordDeliveryTimeout", "5"}} {
		if _, err := NewSettings([][2]string{pair}); err == nil || !strings.Contains(err.Error(), pair[0]) {
			t.Errorf("%v: %v", pair, err)
		}
	}
	_, err := NewSettings([][2]string{{"AllowIdempotentProduceCancellation", "true"}})
	if (err == nil) != (allowCancellationOpt != nil) {
		t.Errorf("AllowIdempotentProduceCancellation: %v", err)
	}
	if err != nil && !strings.Contains(err.Error(), "not an option of franz-go") {
		t.Errorf("AllowIdempotentProduceCancellation: %v", err)
	}
}

// The goal: Kafka errors by their protocol names, kgo's own as _NAME.
func TestErrorName(t *testing.T) {
	cases := []struct {
		err  error
		code int64
		name string
	}{
		{kerr.OutOfOrderSequenceNumber, 45, "OUT_OF_ORDER_SEQUENCE_NUMBER"},
		{fmt.Errorf("x: %w", kerr.NotLeaderForPartition), 6, "NOT_LEADER_FOR_PARTITION"},
		{kgo.ErrMaxBuffered, kCodeLocal, "_MAX_BUFFERED"},
		{fmt.Errorf("%w, last err: %w", errors.New("records have timed out before they were able to be produced"), kerr.RequestTimedOut), kCodeLocal, "_RECORD_TIMEOUT"},
		{errors.New("records have timed out before they were able to be produced"), kCodeLocal, "_RECORD_TIMEOUT"},
		{context.Canceled, kCodeLocal, "_CONTEXT_CANCELED"},
		{errors.New("x"), kCodeLocal, "_ERROR_STRING"},
	}
	for _, c := range cases {
		if code, name := ErrorName(c.err); code != c.code || name != c.name {
			t.Errorf("%v: got %d %s, want %d %s", c.err, code, name, c.code, c.name)
		}
	}
	for in, want := range map[string]string{"errProducerIDLoadFail": "_PRODUCER_ID_LOAD_FAIL",
		"ErrRecordTimeout": "_RECORD_TIMEOUT", "ECONNRESET": "_ECONNRESET", "OpError": "_OP_ERROR"} {
		if got := LocalName(in); got != want {
			t.Errorf("LocalName(%s) = %s, want %s", in, got, want)
		}
	}
}

// Tests of the config mapping and the error names; run by build.sh before it
// links the driver (with ../gojob's tests of the job parser).
package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/IBM/sarama"
)

// The goal: each scenario field lands on its sarama.Config field.
func TestNewConfigMapsFields(t *testing.T) {
	c, err := NewConfig([][2]string{
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
	got := fmt.Sprint(c.Producer.Idempotent, c.Net.MaxOpenRequests, c.Net.ReadTimeout,
		c.Net.DialTimeout, c.Producer.RequiredAcks, c.Producer.Timeout, c.Producer.Retry.Max,
		c.Producer.Retry.Backoff, c.Producer.Return.Successes, c.Producer.Return.Errors,
		c.Producer.Flush.Messages, c.Producer.Flush.Bytes, c.Producer.Flush.Frequency,
		c.Producer.Flush.MaxMessages, c.Producer.MaxMessageBytes, c.ChannelBufferSize,
		c.Metadata.Retry.Max, c.Metadata.Retry.Backoff, c.Version)
	want := "true 1 1.5s 2s -1 3s 7 10ms true true 4 1000 5ms 9 2000 16 2 20ms 2.1.0"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
}

// The goal: defaults, refusals, and Sarama's own consistency rules.
func TestNewConfigDefaultsAndRefusals(t *testing.T) {
	c, err := NewConfig(nil)
	want := sarama.NewConfig().Version
	if !want.IsAtLeast(sarama.V0_11_0_0) {
		want = sarama.V2_1_0_0
	}
	if err != nil || !c.Producer.Return.Successes || c.Version != want {
		t.Fatalf("defaults: %v %+v", err, c)
	}
	for _, pair := range [][2]string{{"acks", "all"}, {"idempotent", "yes"},
		{"retry_max", "1.5"}, {"timeout", "10"}, {"required_acks", "2"}, {"version", "x"}} {
		if _, err := NewConfig([][2]string{pair}); err == nil {
			t.Errorf("accepted %v", pair)
		}
	}
	c, err = NewConfig([][2]string{{"idempotent", "true"}, {"net_max_open_requests", "5"},
		{"required_acks", "-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Validate() == nil {
		t.Error("Sarama accepted idempotent with 5 open requests")
	}
}

// The goal: errors get their Go names, wrapped or not.
func TestErrorName(t *testing.T) {
	cases := []struct {
		err  error
		code int64
		name string
	}{
		{sarama.ErrOutOfOrderSequenceNumber, 45, "ErrOutOfOrderSequenceNumber"},
		{fmt.Errorf("x: %w", sarama.ErrNotLeaderForPartition), 6, "ErrNotLeaderForPartition"},
		{sarama.ErrOutOfBrokers, kCodeLocal, "ErrOutOfBrokers"},
		{errors.New(kProduceSetAssertionText), kCodeLocal, "ErrProduceSetAssertion"},
		{sarama.ConfigurationError("x"), kCodeLocal, "sarama.ConfigurationError"},
	}
	for _, c := range cases {
		if code, name := ErrorName(c.err); code != c.code || name != c.name {
			t.Errorf("%v: got %d %s, want %d %s", c.err, code, name, c.code, c.name)
		}
	}
}

// The job's config pairs onto sarama.Config. prodsim passes a --client=CMD
// driver the scenario's [producer] fields under their scenario names
// (wire/drivers.cc ScenarioNames), which are Sarama's own names in
// snake_case, so each maps 1:1 onto one sarama.Config field: the table
// below. Durations come as Go durations (prodsim writes whole milliseconds,
// "1000ms"); booleans as "true"/"false"; required_acks as -1/0/1.
//
// The driver's own defaults, applied before the pairs: sarama.NewConfig()
// with ClientID "prodsim-sarama", Producer.Return.Successes = true (the
// driver needs every ack). Version stays NewConfig's, as the model's does
// (producer/config.h: 2.1.0 for v1.42.1), unless that predates 0.11 (an
// old Sarama such as 1.22.1 defaults to 0.8.2, which cannot be
// idempotent): then 2.1.0, v1.42.1's default. prodsim's cluster serves every
// version a Sarama default asks for, and a forced 2.6.0 would make the real
// client send ApiVersions on every connection and newer request versions
// than the model of the same scenario (found by the fidelity table: the
// real client's first requests went out a round trip later). A field the
// job leaves out keeps that value; Sarama's own
// defaults differ from the custom-driver defaults prodsim assumes
// (wire/drivers.h Driver: acks -1), notably Producer.RequiredAcks = 1.
package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/IBM/sarama"
)

func parseBool(value string) (bool, error) {
	switch value {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("want true or false")
}

func parseInt(value string) (int, error) {
	if !integerText.MatchString(value) {
		return 0, fmt.Errorf("want an integer")
	}
	v, err := strconv.ParseInt(value, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("an integer outside int32")
	}
	return int(v), nil
}

func parseDuration(value string) (time.Duration, error) {
	d, err := time.ParseDuration(value)
	if err != nil {
		return 0, fmt.Errorf("want a duration such as 1000ms")
	}
	return d, nil
}

// Sarama's RequiredAcks by number, or by prodsim's TOML names.
func parseAcks(value string) (sarama.RequiredAcks, error) {
	switch value {
	case "-1", "wait_for_all":
		return sarama.WaitForAll, nil
	case "0", "no_response":
		return sarama.NoResponse, nil
	case "1", "wait_for_local":
		return sarama.WaitForLocal, nil
	}
	return 0, fmt.Errorf("want -1, 0 or 1")
}

func boolField(get func(*sarama.Config) *bool) func(*sarama.Config, string) error {
	return func(c *sarama.Config, value string) error {
		v, err := parseBool(value)
		*get(c) = v
		return err
	}
}

func intField(get func(*sarama.Config) *int) func(*sarama.Config, string) error {
	return func(c *sarama.Config, value string) error {
		v, err := parseInt(value)
		*get(c) = v
		return err
	}
}

func durationField(get func(*sarama.Config) *time.Duration) func(*sarama.Config, string) error {
	return func(c *sarama.Config, value string) error {
		v, err := parseDuration(value)
		*get(c) = v
		return err
	}
}

// configFields: scenario field name → the sarama.Config field it sets.
var configFields = map[string]func(*sarama.Config, string) error{
	"idempotent":            boolField(func(c *sarama.Config) *bool { return &c.Producer.Idempotent }),
	"net_max_open_requests": intField(func(c *sarama.Config) *int { return &c.Net.MaxOpenRequests }),
	"net_read_timeout":      durationField(func(c *sarama.Config) *time.Duration { return &c.Net.ReadTimeout }),
	"net_dial_timeout":      durationField(func(c *sarama.Config) *time.Duration { return &c.Net.DialTimeout }),
	"required_acks": func(c *sarama.Config, value string) error {
		v, err := parseAcks(value)
		c.Producer.RequiredAcks = v
		return err
	},
	"timeout":             durationField(func(c *sarama.Config) *time.Duration { return &c.Producer.Timeout }),
	"retry_max":           intField(func(c *sarama.Config) *int { return &c.Producer.Retry.Max }),
	"retry_backoff":       durationField(func(c *sarama.Config) *time.Duration { return &c.Producer.Retry.Backoff }),
	"return_successes":    boolField(func(c *sarama.Config) *bool { return &c.Producer.Return.Successes }),
	"return_errors":       boolField(func(c *sarama.Config) *bool { return &c.Producer.Return.Errors }),
	"flush_messages":      intField(func(c *sarama.Config) *int { return &c.Producer.Flush.Messages }),
	"flush_bytes":         intField(func(c *sarama.Config) *int { return &c.Producer.Flush.Bytes }),
	"flush_frequency":     durationField(func(c *sarama.Config) *time.Duration { return &c.Producer.Flush.Frequency }),
	"flush_max_messages":  intField(func(c *sarama.Config) *int { return &c.Producer.Flush.MaxMessages }),
	"max_message_bytes":   intField(func(c *sarama.Config) *int { return &c.Producer.MaxMessageBytes }),
	"channel_buffer_size": intField(func(c *sarama.Config) *int { return &c.ChannelBufferSize }),
	"metadata_retry_max":  intField(func(c *sarama.Config) *int { return &c.Metadata.Retry.Max }),
	"metadata_retry_backoff": durationField(func(c *sarama.Config) *time.Duration {
		return &c.Metadata.Retry.Backoff
	}),
	"version": func(c *sarama.Config, value string) error {
		v, err := sarama.ParseKafkaVersion(value)
		c.Version = v
		return err
	},
}

// NewConfig is the driver's defaults with the job's pairs applied in
// order. An error names the pair; Validate is the caller's.
func NewConfig(pairs [][2]string) (*sarama.Config, error) {
	c := sarama.NewConfig()
	c.ClientID = "prodsim-sarama"
	c.Producer.Return.Successes = true
	if !c.Version.IsAtLeast(sarama.V0_11_0_0) {
		c.Version = sarama.V2_1_0_0
	}
	for _, pair := range pairs {
		set, ok := configFields[pair[0]]
		if !ok {
			return nil, fmt.Errorf("config %q: unknown property (the scenario field names of wire/drivers.cc ScenarioNames)", pair[0])
		}
		if err := set(c, pair[1]); err != nil {
			return nil, fmt.Errorf("config %q=%q: %v", pair[0], pair[1], err)
		}
	}
	return c, nil
}

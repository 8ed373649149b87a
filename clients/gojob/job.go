// The job line of the driver protocol (clients/README.md, "The job"): one
// strict JSON object, every key required, no other key, each key once, and
// the same ranges as clients/librdkafka/job.h, so that both drivers refuse
// the same jobs with the same words.
//
// encoding/json alone is laxer than the protocol (it takes null for an
// array, a fraction for an integer it is not asked to decode, a repeated
// key, a second value after the first), so the object is walked token by
// token and each member's raw text is checked before it is decoded.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
)

// The protocol's limits (clients/librdkafka/job.h).
const (
	kMessagesMax       = 10_000_000
	kValueBytesMax     = 16 << 20
	kIntervalUsMax     = 3_600_000_000  // an hour
	kCloseAtUsMax      = 86_400_000_000 // a day
	kFlushTimeoutMsMax = 3_600_000      // an hour
	kTopicsMax         = 1000
	kTopicBytesMax     = 249 // Kafka's longest topic name
	kConfigPairsMax    = 1000
	kBootstrapBytesMax = 4096
	kJobLineBytesMax   = 1 << 20 // wire/json.h kTextBytesMax
)

// Job is one trial's workload, as prodsim wrote it.
type Job struct {
	Bootstrap      string
	Topics         []string
	Messages       int64
	Keys           int64
	Burst          int64
	IntervalUs     int64
	ValueBytes     int64
	CloseAtUs      int64 // -1: close once every message was handed over
	FlushTimeoutMs int64
	Config         [][2]string // the client's properties, in order
}

// An integer in RFC 8259's grammar without fraction or exponent, and no
// leading zero.
var integerText = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

func fieldError(key, what string) error {
	return fmt.Errorf("job key %q: %s", key, what)
}

// kindOf names the JSON kind of raw (already valid JSON), for messages.
func kindOf(raw json.RawMessage) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if integerText.Match(raw) {
		return "an integer"
	}
	return "a number"
}

func wantString(key string, raw json.RawMessage) (string, error) {
	if raw[0] != '"' {
		return "", fieldError(key, "want a string, got "+kindOf(raw))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fieldError(key, err.Error())
	}
	return s, nil
}

func wantArray(key string, raw json.RawMessage) ([]json.RawMessage, error) {
	if raw[0] != '[' {
		return nil, fieldError(key, "want an array, got "+kindOf(raw))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fieldError(key, err.Error())
	}
	return items, nil
}

func wantInteger(key string, raw json.RawMessage, lo, hi int64) (int64, error) {
	if !integerText.Match(raw) {
		return 0, fieldError(key, "want an integer, got "+kindOf(raw))
	}
	v, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, fieldError(key, "an integer outside int64")
	}
	if v < lo || v > hi {
		return 0, fieldError(key, fmt.Sprintf("want an integer in [%d, %d], got %d", lo, hi, v))
	}
	return v, nil
}

func readBootstrap(raw json.RawMessage, job *Job) error {
	s, err := wantString("bootstrap", raw)
	if err != nil {
		return err
	}
	if s == "" {
		return fieldError("bootstrap", "empty")
	}
	if len(s) > kBootstrapBytesMax {
		return fieldError("bootstrap", "too long")
	}
	job.Bootstrap = s
	return nil
}

func readTopics(raw json.RawMessage, job *Job) error {
	items, err := wantArray("topics", raw)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return fieldError("topics", "empty")
	}
	if len(items) > kTopicsMax {
		return fieldError("topics", fmt.Sprintf("more than %d topics", kTopicsMax))
	}
	for _, item := range items {
		topic, err := wantString("topics", item)
		if err != nil {
			return err
		}
		if topic == "" {
			return fieldError("topics", "an empty topic name")
		}
		if len(topic) > kTopicBytesMax {
			return fieldError("topics", fmt.Sprintf("a topic name longer than %d", kTopicBytesMax))
		}
		job.Topics = append(job.Topics, topic)
	}
	return nil
}

// [["name","value"], ...]: each pair exactly two strings, the name non-empty.
func readConfig(raw json.RawMessage, job *Job) error {
	items, err := wantArray("config", raw)
	if err != nil {
		return err
	}
	if len(items) > kConfigPairsMax {
		return fieldError("config", fmt.Sprintf("more than %d pairs", kConfigPairsMax))
	}
	job.Config = [][2]string{}
	for _, item := range items {
		pair, err := wantArray("config", item)
		if err != nil {
			return err
		}
		if len(pair) != 2 {
			return fieldError("config", "a pair of other than 2 elements")
		}
		name, err := wantString("config", pair[0])
		if err != nil {
			return err
		}
		value, err := wantString("config", pair[1])
		if err != nil {
			return err
		}
		if name == "" {
			return fieldError("config", "an empty property name")
		}
		job.Config = append(job.Config, [2]string{name, value})
	}
	return nil
}

// field is one job key: an integer member with its range, or a reader.
type field struct {
	key     string
	integer func(*Job) *int64
	lo, hi  int64
	read    func(json.RawMessage, *Job) error
}

var fields = []field{
	{key: "bootstrap", read: readBootstrap},
	{key: "topics", read: readTopics},
	{key: "messages", integer: func(j *Job) *int64 { return &j.Messages }, lo: 0, hi: kMessagesMax},
	{key: "keys", integer: func(j *Job) *int64 { return &j.Keys }, lo: 0, hi: kMessagesMax},
	{key: "burst", integer: func(j *Job) *int64 { return &j.Burst }, lo: 1, hi: kMessagesMax},
	{key: "interval_us", integer: func(j *Job) *int64 { return &j.IntervalUs }, lo: 0, hi: kIntervalUsMax},
	{key: "value_bytes", integer: func(j *Job) *int64 { return &j.ValueBytes }, lo: 0, hi: kValueBytesMax},
	{key: "close_at_us", integer: func(j *Job) *int64 { return &j.CloseAtUs }, lo: -1, hi: kCloseAtUsMax},
	{key: "flush_timeout_ms", integer: func(j *Job) *int64 { return &j.FlushTimeoutMs }, lo: 0, hi: kFlushTimeoutMsMax},
	{key: "config", read: readConfig},
}

func (f *field) apply(raw json.RawMessage, job *Job) error {
	if f.read != nil {
		return f.read(raw, job)
	}
	v, err := wantInteger(f.key, raw, f.lo, f.hi)
	if err != nil {
		return err
	}
	*f.integer(job) = v
	return nil
}

func findField(key string) *field {
	for i := range fields {
		if fields[i].key == key {
			return &fields[i]
		}
	}
	return nil
}

// ParseJob reads one job line (without its newline).
func ParseJob(line []byte) (*Job, error) {
	if !json.Valid(line) {
		return nil, errors.New("job: not one JSON value")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("job: want an object")
	}
	job := &Job{}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("job: %v", err)
		}
		key := tok.(string) // json.Valid: an object member starts with its name
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("job: %v", err)
		}
		f := findField(key)
		if f == nil {
			return nil, fmt.Errorf("job: unknown key %q", key)
		}
		if seen[key] {
			return nil, fmt.Errorf("job: key %q repeated", key)
		}
		seen[key] = true
		if err := f.apply(raw, job); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, fmt.Errorf("job: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF { // json.Valid: only whitespace follows
		return nil, errors.New("job: text after the object")
	}
	for _, f := range fields {
		if !seen[f.key] {
			return nil, fmt.Errorf("job: missing key %q", f.key)
		}
	}
	return job, nil
}

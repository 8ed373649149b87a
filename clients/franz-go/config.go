// The job's config pairs onto kgo options. Two kinds of name arrive, in any
// mix, applied in order (a later pair wins):
//
//   - prodsim's scenario field names (wire/drivers.cc ScenarioNames, what a
//     --client=PATH driver is given): Sarama's names in snake_case, each
//     mapped onto the nearest kgo option, or ignored where kgo has none
//     (scenarioFields below; README.md has the table with the reasons);
//   - kgo's own option names, spelled as the kgo functions are
//     (RecordRetries, ProducerLinger, ...; kgoFields below), for a
//     [clients."franz-go"] table.
//
// Values: durations as Go durations ("1000ms", "1.5s"; prodsim writes
// whole milliseconds), booleans "true"/"false", integers in decimal.
//
// Idempotence is kgo's default and kgo refuses acks other than all, and
// MaxProduceRequestsInflightPerBroker other than 1, while idempotent
// (config.go validateCfg). The scenario names follow Sarama, whose
// default is not idempotent, so: required_acks 0 or 1 without an explicit
// idempotent (or DisableIdempotentWrite) disables idempotence, as the Java
// client 3.x does for an acks that conflicts with its default; and
// net_max_open_requests applies only when not idempotent (kgo's
// idempotent limit is its own: 1, then 5 per broker once the broker
// answers Produce v4+). kgo's own names are passed as they are, so a
// conflict there is kgo's refusal, a job error.
//
// Options that a kgo release lacks (optional_gen.go, written by build.sh
// from the kgo source being built): a kgo name is a job error saying so,
// a scenario name is ignored (noted on stderr).
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const kConcurrentProducersMax = 1024

// Settings is what the pairs ask for: the state that decides options
// together (idempotence, acks, in-flight), the options set one by one, and
// the driver's own knobs.
type Settings struct {
	opts []kgo.Opt // in the pairs' order

	idempotent         bool
	idempotentExplicit bool // idempotent or DisableIdempotentWrite was given
	acks               string
	acksFromScenario   bool
	inflight           int // 0: kgo's default
	inflightScenario   bool
	stopOnDataLoss     bool
	allowCancellation  bool

	concurrentProducers int
	ignored             []string // scenario names with no kgo option
}

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
		return 0, fmt.Errorf("want a Go duration such as 1000ms")
	}
	return d, nil
}

// setter applies one value to the Settings.
type setter func(s *Settings, value string) error

func intOpt(opt func(int) kgo.Opt) setter {
	return func(s *Settings, value string) error {
		v, err := parseInt(value)
		if err == nil {
			s.opts = append(s.opts, opt(v))
		}
		return err
	}
}

func durationOpt(opt func(time.Duration) kgo.Opt) setter {
	return func(s *Settings, value string) error {
		v, err := parseDuration(value)
		if err == nil {
			s.opts = append(s.opts, opt(v))
		}
		return err
	}
}

// trueOnly: a kgo option without argument, set by "true".
func trueOnly(set func(s *Settings)) setter {
	return func(s *Settings, value string) error {
		if value != "true" {
			return fmt.Errorf("want true (the option takes no value)")
		}
		set(s)
		return nil
	}
}

// fixedBackoff is RetryBackoffFn's argument for one fixed backoff, as
// Sarama's Producer.Retry.Backoff is.
func fixedBackoff(d time.Duration) kgo.Opt {
	return kgo.RetryBackoffFn(func(int) time.Duration { return d })
}

func ignore(name string) setter {
	return func(s *Settings, value string) error {
		s.ignored = append(s.ignored, name)
		return nil
	}
}

// missing: an option this kgo release does not have.
func missing(name string) setter {
	return func(s *Settings, value string) error {
		return fmt.Errorf("not an option of franz-go %s (kgo.%s is newer)", kgoVersion, name)
	}
}

func setIdempotent(s *Settings, value string) error {
	v, err := parseBool(value)
	s.idempotent, s.idempotentExplicit = v, true
	return err
}

// scenarioFields: prodsim's scenario field names (README.md's table).
var scenarioFields = map[string]setter{
	"idempotent": setIdempotent,
	"net_max_open_requests": func(s *Settings, value string) error {
		v, err := parseInt(value)
		s.inflight, s.inflightScenario = v, true
		return err
	},
	"required_acks": func(s *Settings, value string) error {
		names := map[string]string{"-1": "all", "1": "leader", "0": "none"}
		v, ok := names[value]
		if !ok {
			return fmt.Errorf("want -1, 0 or 1")
		}
		s.acks, s.acksFromScenario = v, true
		return nil
	},
	"timeout":           durationOpt(func(d time.Duration) kgo.Opt { return kgo.ProduceRequestTimeout(d) }),
	"retry_max":         intOpt(func(n int) kgo.Opt { return kgo.RecordRetries(n) }),
	"retry_backoff":     durationOpt(fixedBackoff),
	"flush_frequency":   durationOpt(func(d time.Duration) kgo.Opt { return kgo.ProducerLinger(d) }),
	"max_message_bytes": intOpt(func(n int) kgo.Opt { return kgo.ProducerBatchMaxBytes(int32(n)) }),
	"net_read_timeout":  durationOpt(func(d time.Duration) kgo.Opt { return kgo.RequestTimeoutOverhead(d) }),
	"net_dial_timeout": func(s *Settings, value string) error {
		if dialTimeoutOpt == nil {
			return ignore("net_dial_timeout")(s, value)
		}
		return durationOpt(dialTimeoutOpt)(s, value)
	},
	"flush_bytes":            ignore("flush_bytes"),
	"flush_messages":         ignore("flush_messages"),
	"flush_max_messages":     ignore("flush_max_messages"),
	"return_successes":       ignore("return_successes"),
	"return_errors":          ignore("return_errors"),
	"channel_buffer_size":    ignore("channel_buffer_size"),
	"metadata_retry_max":     ignore("metadata_retry_max"),
	"metadata_retry_backoff": ignore("metadata_retry_backoff"),
	"version":                ignore("version"),
}

// kgoFields: kgo's option names, and the driver's concurrent_producers.
var kgoFields = map[string]setter{
	"RecordRetries":         intOpt(func(n int) kgo.Opt { return kgo.RecordRetries(n) }),
	"RecordDeliveryTimeout": durationOpt(func(d time.Duration) kgo.Opt { return kgo.RecordDeliveryTimeout(d) }),
	"ProduceRequestTimeout": durationOpt(func(d time.Duration) kgo.Opt { return kgo.ProduceRequestTimeout(d) }),
	"ProducerLinger":        durationOpt(func(d time.Duration) kgo.Opt { return kgo.ProducerLinger(d) }),
	"MaxBufferedRecords":    intOpt(func(n int) kgo.Opt { return kgo.MaxBufferedRecords(n) }),
	"RequiredAcks": func(s *Settings, value string) error {
		if value != "all" && value != "leader" && value != "none" {
			return fmt.Errorf("want all, leader or none")
		}
		s.acks, s.acksFromScenario = value, false
		return nil
	},
	"DisableIdempotentWrite": func(s *Settings, value string) error {
		v, err := parseBool(value)
		s.idempotent, s.idempotentExplicit = !v, true
		return err
	},
	"MaxProduceRequestsInflightPerBroker": func(s *Settings, value string) error {
		if maxInflightOpt == nil {
			return missing("MaxProduceRequestsInflightPerBroker")(s, value)
		}
		v, err := parseInt(value)
		s.inflight, s.inflightScenario = v, false
		return err
	},
	"AllowIdempotentProduceCancellation": func(s *Settings, value string) error {
		if allowCancellationOpt == nil {
			return missing("AllowIdempotentProduceCancellation")(s, value)
		}
		return trueOnly(func(s *Settings) { s.allowCancellation = true })(s, value)
	},
	"StopProducerOnDataLossDetected": trueOnly(func(s *Settings) { s.stopOnDataLoss = true }),
	"ProducerBatchMaxBytes":          intOpt(func(n int) kgo.Opt { return kgo.ProducerBatchMaxBytes(int32(n)) }),
	"RetryBackoff":                   durationOpt(fixedBackoff),
	"RequestRetries":                 intOpt(func(n int) kgo.Opt { return kgo.RequestRetries(n) }),
	"ConnIdleTimeout":                durationOpt(func(d time.Duration) kgo.Opt { return kgo.ConnIdleTimeout(d) }),
	"MetadataMaxAge":                 durationOpt(func(d time.Duration) kgo.Opt { return kgo.MetadataMaxAge(d) }),
	"MetadataMinAge":                 durationOpt(func(d time.Duration) kgo.Opt { return kgo.MetadataMinAge(d) }),
	"DialTimeout": func(s *Settings, value string) error {
		if dialTimeoutOpt == nil {
			return missing("DialTimeout")(s, value)
		}
		return durationOpt(dialTimeoutOpt)(s, value)
	},
	"RequestTimeoutOverhead": durationOpt(func(d time.Duration) kgo.Opt { return kgo.RequestTimeoutOverhead(d) }),
	"concurrent_producers": func(s *Settings, value string) error {
		v, err := parseInt(value)
		if err == nil && (v < 1 || v > kConcurrentProducersMax) {
			err = fmt.Errorf("want an integer in [1, %d]", kConcurrentProducersMax)
		}
		s.concurrentProducers = v
		return err
	},
}

// NewSettings is the driver's defaults with the job's pairs applied in
// order. An error names the pair.
func NewSettings(pairs [][2]string) (*Settings, error) {
	s := &Settings{idempotent: true, acks: "all", concurrentProducers: 1}
	for _, pair := range pairs {
		set, ok := scenarioFields[pair[0]]
		if !ok {
			set, ok = kgoFields[pair[0]]
		}
		if !ok {
			return nil, fmt.Errorf("config %q: unknown property (the scenario field names of wire/drivers.cc ScenarioNames, or kgo's option names: clients/franz-go/README.md)", pair[0])
		}
		if err := set(s, pair[1]); err != nil {
			return nil, fmt.Errorf("config %q=%q: %v", pair[0], pair[1], err)
		}
	}
	// Sarama's acks on a client idempotent by default (the file's comment).
	if s.acksFromScenario && s.acks != "all" && !s.idempotentExplicit {
		s.idempotent = false
	}
	return s, nil
}

// Opts are the kgo options of the settings, after the driver's own
// (client id, seeds, logger) that the caller adds.
func (s *Settings) Opts() []kgo.Opt {
	opts := append([]kgo.Opt{}, s.opts...)
	switch s.acks {
	case "all":
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case "leader":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()))
	case "none":
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()))
	}
	if !s.idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	switch {
	case s.inflight == 0:
	case maxInflightOpt == nil:
		// Only a scenario name reaches here (missing refuses the kgo name).
		s.ignored = append(s.ignored, "net_max_open_requests")
	case s.inflightScenario && s.idempotent:
		// kgo's idempotent limit is its own (the file's comment).
		s.ignored = append(s.ignored, "net_max_open_requests (idempotent)")
	default:
		opts = append(opts, maxInflightOpt(s.inflight))
	}
	if s.stopOnDataLoss {
		opts = append(opts, kgo.StopProducerOnDataLossDetected())
	}
	if s.allowCancellation {
		opts = append(opts, allowCancellationOpt())
	}
	return opts
}

// noteIgnored says on stderr which scenario fields had no kgo option.
func (s *Settings) noteIgnored() {
	for _, name := range s.ignored {
		fmt.Fprintf(os.Stderr, "prodsim-franz-go: config %q has no kgo option here; ignored\n", name)
	}
}

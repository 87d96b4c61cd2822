package bus

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Stream defaults.
const (
	// DefaultReplicas is the stream's replica count: 1 for the embedded
	// server, 3 is usual for a fleet cluster.
	DefaultReplicas = 1

	// DefaultDuplicateWindow is how long the stream remembers message ids
	// to drop re-sends. See [StreamConfig.DuplicateWindow].
	DefaultDuplicateWindow = 2 * time.Hour

	// maxReplicas is JetStream's own limit.
	maxReplicas = 5
)

// StreamConfig describes the one sessionpipe stream: subjects
// <prefix>.entries.> and <prefix>.dead.>, limits retention, discard old.
// The zero value is valid and means every default.
type StreamConfig struct {
	// Name is the stream name. Default [DefaultStream].
	Name string

	// Prefix is the subject prefix, one or more tokens. Default
	// [DefaultPrefix]. Publishers and consumers must use the same one.
	Prefix string

	// Replicas is the number of copies JetStream keeps, 1 to 5. Default
	// [DefaultReplicas]. More than 1 needs a JetStream cluster.
	Replicas int

	// DuplicateWindow is how long the stream remembers each Nats-Msg-Id so
	// that a re-send of the same entry is acknowledged as a duplicate
	// instead of stored twice. Default [DefaultDuplicateWindow], or MaxAge
	// when that is shorter.
	//
	// The trade-off: the stream leader keeps one in-memory record per
	// message of the window (about 100 bytes with a typical entry key), so
	// 2h at 100 entries/s costs ~70 MB; and a re-send later than the window
	// is stored again. Re-sends come from a tailer that restarts: it
	// resumes from its checkpoint, which trails the last acknowledged line
	// by at most its in-flight window and one checkpoint interval, and it
	// re-reads those lines as soon as it starts. Only a tailer that stays
	// down longer than the window re-sends lines the stream already holds,
	// and then only those few; consumers that key on the entry key
	// (the indexer) absorb them anyway.
	DuplicateWindow time.Duration

	// MaxAge is how long messages are kept; 0 keeps them until MaxBytes
	// (or forever).
	MaxAge time.Duration

	// MaxBytes caps the stream's size; the oldest messages are discarded
	// beyond it. 0 means no cap.
	MaxBytes int64

	// Storage is file (the default, the zero value) or memory.
	Storage jetstream.StorageType

	// FirstSeq is the sequence of the first message of a stream that
	// EnsureStream creates (0: 1). It is ignored for a stream that
	// exists. An offline export uses it to continue the sequences of the
	// output it adds to.
	FirstSeq uint64

	// Logger receives what [EnsureStream] has to say: the settings of an
	// existing stream that differ from these (Warn: the stream's are
	// kept), a subject it added, a wait for the stream's leader. nil
	// discards it.
	Logger *slog.Logger
}

// Validate reports the first invalid field as a *[ConfigError]. Zero values
// are valid: they stand for the defaults.
func (c StreamConfig) Validate() error {
	switch {
	case c.Name != "" && !validStreamName(c.Name):
		return invalid("stream", c.Name, "stream names cannot hold '.', '*', '>', '/', '\\' or whitespace")
	case c.Prefix != "" && !validSubject(c.Prefix):
		return invalid("subject_prefix", c.Prefix, "must be dot-separated non-empty tokens without wildcards or whitespace")
	case c.Replicas < 0 || c.Replicas > maxReplicas:
		return invalid("replicas", c.Replicas, "must be 1 to 5")
	case c.DuplicateWindow < 0:
		return invalid("duplicate_window", c.DuplicateWindow, "must not be negative")
	case c.MaxAge < 0:
		return invalid("max_age", c.MaxAge, "must not be negative")
	case c.MaxAge > 0 && c.DuplicateWindow > c.MaxAge:
		return invalid("duplicate_window", c.DuplicateWindow, "must not exceed max_age "+c.MaxAge.String())
	case c.MaxBytes < 0:
		return invalid("max_bytes", c.MaxBytes, "must not be negative")
	case c.Storage != jetstream.FileStorage && c.Storage != jetstream.MemoryStorage:
		return invalid("storage", c.Storage, "must be file or memory")
	}
	return nil
}

// WithDefaults returns c with its zero fields set to the defaults: the
// stream name, subject prefix, replicas and duplicate window that
// [EnsureStream] uses. Commands and consumers call it instead of
// re-deriving the defaults, so that everyone agrees on the stream.
func (c StreamConfig) WithDefaults() StreamConfig {
	if c.Name == "" {
		c.Name = DefaultStream
	}
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.Replicas == 0 {
		c.Replicas = DefaultReplicas
	}
	if c.DuplicateWindow == 0 {
		c.DuplicateWindow = DefaultDuplicateWindow
		if c.MaxAge > 0 && c.MaxAge < c.DuplicateWindow {
			c.DuplicateWindow = c.MaxAge
		}
	}
	return c
}

// jetstream returns the JetStream form of c (defaults applied).
func (c StreamConfig) jetstream() jetstream.StreamConfig {
	maxBytes := c.MaxBytes
	if maxBytes == 0 {
		maxBytes = -1
	}
	return jetstream.StreamConfig{
		Name:        c.Name,
		Description: "sessionpipe normalised transcript entries, dead letters and original lines",
		Subjects:    []string{EntriesFilter(c.Prefix), DeadFilter(c.Prefix), RawFilter(c.Prefix)},
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      c.MaxAge,
		MaxBytes:    maxBytes,
		MaxMsgs:     -1,
		Storage:     c.Storage,
		Replicas:    c.Replicas,
		Duplicates:  c.DuplicateWindow,
		FirstSeq:    c.FirstSeq,
	}
}

// EnsureStream makes sure the stream of cfg exists and can be used, and
// returns it. It is safe to call from every process at start:
//
//   - A missing stream is created with cfg's settings. Only its creator
//     sets them: a process that finds the stream keeps the stream's
//     retention, limits, duplicate window, storage and replicas, logs a
//     warning (cfg.Logger) for each that differs from cfg, and goes on
//     with the stream as it is. Changing them is an explicit act:
//     `sessionpipe stream update` ([UpdateStream]).
//   - A subject that sessionpipe publishes to and that the stream does
//     not hold is added (and logged); subjects and sources an operator
//     added stay.
//   - It returns once the stream has a leader. A JetStream that does not
//     answer yet (a cluster electing its leaders, a request timing out)
//     is asked again, with backoff, until ctx ends.
//
// It fails if cfg is invalid, when ctx ends first (context.Cause), or
// when the server refuses a request for what it is (permissions, replicas
// a cluster cannot hold: a *jetstream.APIError).
func EnsureStream(ctx context.Context, js jetstream.JetStream, cfg StreamConfig) (jetstream.Stream, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	return EnsureStreamConfig(ctx, js, cfg.jetstream(), cfg.Logger)
}

// validStreamName reports whether name is a usable JetStream stream name.
func validStreamName(name string) bool {
	return len(name) <= 255 && !strings.ContainsAny(name, ".*>/\\ \t\r\n\f\v") && strings.IndexFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) < 0
}

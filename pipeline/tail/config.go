package tail

import (
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/discover"
	"github.com/sessionpipe/sessionpipe/pipeline/redact"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Defaults of [Config].
const (
	DefaultRescanInterval     = 10 * time.Second
	DefaultIdleTimeout        = time.Minute
	DefaultMaxOpenFiles       = 256
	DefaultCheckpointInterval = time.Second
	DefaultWorkers            = 2
	// DefaultMaxPayload is the largest message published, headers
	// included. An entry whose message would be larger is shortened to
	// fit (bus.FitEntryMsg: text, tool inputs and results, then the
	// number of tool calls and results, counted; never usage or ids) and
	// marked truncated; the transcript itself keeps the whole.
	DefaultMaxPayload = 1 << 20
	// DefaultDetectWait is how long a file whose first lines tell no
	// format is waited for before it is skipped as not a transcript.
	DefaultDetectWait = 30 * time.Second
	// DefaultDrain is how long [Tailer.Run] waits for acknowledgements
	// once its context ended.
	DefaultDrain = 10 * time.Second
)

// Config configures a [Tailer].
type Config struct {
	// Watch selects the files to follow, by the rule of the offline
	// commands (package discover). Each watch is a file, a directory
	// (every file under it, at any depth) or a glob ("**" matches any
	// number of directories, '\' escapes; a directory it matches is
	// every file under it); a path that exists is taken as it is, even
	// with glob characters in its name, and one that does not exist yet
	// may appear later as a file or a directory. Paths must be
	// absolute (the command expands "~"). Only names that may hold a
	// transcript (formats.IsCandidate) and sessions.json stores are
	// followed. A watch that matches nothing at start and has no
	// directory to wait on is logged as a warning.
	Watch []string

	// DefaultWatches says the watches are the well-known locations of
	// every agent, not paths a user named: one that matches nothing (an
	// agent not installed here) is logged at Debug, not as a warning.
	DefaultWatches bool

	// StateDir holds the checkpoints. Required.
	StateDir string

	// Host names this machine in entries and subjects. Required.
	Host string

	// Labels are attached to every entry published (schema.Entry.Labels):
	// the host's team, project, cost centre…, by which the indexer groups
	// and filters usage and alert rules scope. They must pass
	// schema.ValidateLabels. The tailer keeps its own copy; entries share
	// one map, which consumers must not change.
	Labels map[string]string

	// Publisher publishes entries and dead letters. Required. The
	// tailer does not close it.
	Publisher *bus.Publisher

	// Prefix is the subject prefix; default bus.DefaultPrefix.
	Prefix string

	// FromEnd makes files seen for the first time (no checkpoint) start
	// at their end: only lines written from now on are published. The
	// default reads every file from its start (backfill).
	FromEnd bool

	// Text and Raw are passed to the parsers: message text, tool inputs
	// and results in entries (Text, on by default through the command),
	// and the original JSON object (Raw).
	Text, Raw bool

	// Redactor, when set, is applied to every entry before it is
	// published (redact.Entry: secrets replaced, or all text left out in
	// metadata mode), so that nothing secret leaves the host. Nil
	// publishes entries as parsed. The commands set one (--content,
	// redacted by default).
	Redactor *redact.Redactor

	// Archive publishes the original bytes of every line read, as raw
	// chunks on bus.RawSubject (redacted as entries are when Redactor
	// is set), before the entries of the same lines: the exporter keeps
	// them as a byte-exact archive of the transcripts. A line counts as
	// sent, in the checkpoint, only once its chunk is stored too.
	Archive bool

	// MaxLineBytes is the longest line read; a longer one is sent to the
	// dead-letter subject with its head. Default: jsonl's.
	MaxLineBytes int

	// MaxDocumentBytes bounds a whole-file document (an Amp thread, a
	// Gemini CLI session-*.json, a Droid settings file), read whole at
	// every change; a larger one is not read, counted
	// (sessionpipe_tail_documents_too_large_total) and logged. Zero means
	// formats.DefaultMaxDocumentBytes.
	MaxDocumentBytes int64

	// MaxPayload bounds a published message, headers included; default
	// DefaultMaxPayload. The connected server's max_payload, when
	// smaller, bounds it too (read again for every batch of lines, so a
	// reconnect to another server is followed).
	MaxPayload int

	RescanInterval     time.Duration // full rescan of the globs; default DefaultRescanInterval
	IdleTimeout        time.Duration // an unchanged file's handle and parser state are let go after this (a file last written longer ago keeps none once read); default DefaultIdleTimeout
	MaxOpenFiles       int           // open file handles at most; default DefaultMaxOpenFiles
	CheckpointInterval time.Duration // checkpoint save period; default DefaultCheckpointInterval
	Workers            int           // files read in parallel; default DefaultWorkers
	DetectWait         time.Duration // see DefaultDetectWait

	// Static says that the files present at the first scan are complete
	// and will not grow (a one-shot run, `sessionpipe run -once`): such a
	// file whose lines tell no format is decided at once, from what it
	// holds, instead of being waited for DetectWait. Files that appear
	// later are followed as usual.
	Static bool

	// Drain bounds the soft stop of [Tailer.Run]: how long, counted from
	// the end of its context, it waits for the acknowledgements of what
	// was published. Default DefaultDrain; a negative value gives up at
	// once.
	Drain time.Duration

	// Poll turns file notifications off: changes are found by the
	// rescans alone, every RescanInterval. For network file systems,
	// where inotify does not see writes made on other hosts, and for
	// hosts short of inotify watches.
	Poll bool

	// DatabasePoll is how often the agents' SQLite databases found under
	// the watches (OpenCode's opencode.db) are asked for new rows; default
	// DefaultDatabasePoll.
	DatabasePoll time.Duration

	// Registry receives the tailer's metrics (sessionpipe_tail_*, see
	// [Metrics]); nil means a registry of its own, served by nothing.
	// One registry takes one tailer: [New] fails on a second.
	Registry *prometheus.Registry

	// Logger receives lifecycle events (Info), bad lines and file
	// changes (Debug/Warn, rate-limited); nil discards.
	Logger *slog.Logger
}

// Validate reports the first invalid field as a *ConfigError.
func (c Config) Validate() error {
	switch {
	case len(c.Watch) == 0:
		return &ConfigError{Field: "watch", Value: c.Watch, Err: ErrInvalidConfig}
	case c.StateDir == "":
		return &ConfigError{Field: "state_dir", Value: c.StateDir, Err: ErrInvalidConfig}
	case c.Host == "":
		return &ConfigError{Field: "host", Value: c.Host, Err: ErrInvalidConfig}
	case c.Publisher == nil:
		return &ConfigError{Field: "publisher", Value: nil, Err: ErrInvalidConfig}
	case c.MaxOpenFiles < 0:
		return &ConfigError{Field: "max_open_files", Value: c.MaxOpenFiles, Err: ErrInvalidConfig}
	case c.Workers < 0:
		return &ConfigError{Field: "workers", Value: c.Workers, Err: ErrInvalidConfig}
	case c.MaxPayload != 0 && c.MaxPayload < 4096:
		return &ConfigError{Field: "max_payload", Value: c.MaxPayload, Err: ErrInvalidConfig}
	}
	if err := schema.ValidateLabels(c.Labels); err != nil {
		return &ConfigError{Field: "labels", Value: c.Labels, Err: fmt.Errorf("%w: %w", ErrInvalidConfig, err)}
	}
	return validateWatches(c.Watch)
}

// validateWatches reports the first watch that is not absolute, or not
// there and not a valid glob, as a *ConfigError.
func validateWatches(watches []string) error {
	for _, w := range watches {
		if !filepath.IsAbs(w) {
			return &ConfigError{Field: "watch", Value: w, Err: ErrInvalidConfig}
		}
		if err := discover.Validate(w); err != nil {
			return &ConfigError{Field: "watch", Value: w, Err: ErrInvalidConfig}
		}
	}
	return nil
}

func (c Config) withDefaults() Config {
	if len(c.Labels) > 0 {
		c.Labels = maps.Clone(c.Labels)
	} else {
		c.Labels = nil
	}
	if c.Prefix == "" {
		c.Prefix = bus.DefaultPrefix
	}
	if c.RescanInterval <= 0 {
		c.RescanInterval = DefaultRescanInterval
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxOpenFiles == 0 {
		c.MaxOpenFiles = DefaultMaxOpenFiles
	}
	if c.CheckpointInterval <= 0 {
		c.CheckpointInterval = DefaultCheckpointInterval
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.MaxPayload == 0 {
		c.MaxPayload = DefaultMaxPayload
	}
	if c.DetectWait <= 0 {
		c.DetectWait = DefaultDetectWait
	}
	if c.DatabasePoll <= 0 {
		c.DatabasePoll = DefaultDatabasePoll
	}
	switch {
	case c.Drain == 0:
		c.Drain = DefaultDrain
	case c.Drain < 0:
		c.Drain = 0
	}
	return c
}

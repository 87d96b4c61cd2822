package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Indexer defaults.
const (
	// DefaultConsumerName is the indexer's durable consumer.
	DefaultConsumerName = "indexer"
	// DefaultCommitInterval is how often applied entries are committed
	// to the state (and how stale a restart can make the API for a
	// moment: nothing applied is lost, it is applied again).
	DefaultCommitInterval = time.Second
	// DefaultMaxFacts bounds the facts kept in memory between commits;
	// sessions, file states and rollup cells are bounded alongside.
	DefaultMaxFacts = 200_000
)

// IndexerConfig configures an [Indexer].
type IndexerConfig struct {
	// JS reaches the stream; required.
	JS jetstream.JetStream

	// Stream names the stream and subject prefix (zero fields: defaults).
	Stream bus.StreamConfig

	// Name is the durable consumer's name; default DefaultConsumerName.
	// Two indexers that run at the same time need two names.
	Name string

	// Dir is the state directory, owned by this indexer; required.
	Dir string

	// Pricer prices calls without a recorded cost; nil leaves them
	// unpriced.
	Pricer Pricer

	// CommitInterval: see DefaultCommitInterval.
	CommitInterval time.Duration

	// MaxFacts: see DefaultMaxFacts.
	MaxFacts int

	// OnCommit, when set, is called after each commit with the sessions
	// changed since the previous one (the live views' updates), under the
	// indexer's lock: it must not block.
	OnCommit func(changed []Session)

	// Rules are the alert rules (alert.Load); none: no alerts.
	Rules []alert.Rule
	// Webhook, when set, receives every alert published on the alerts
	// stream, at least once, through the durable consumer WebhookConsumer
	// (default DefaultWebhookConsumer), run while the indexer is active:
	// an alert not delivered when the indexer stops is delivered after
	// the restart. The consumer, created when missing, starts from the
	// alerts published from then on; see webhook.go.
	Webhook         *alert.Webhook
	WebhookConsumer string
	// AlertMaxLag: see DefaultAlertMaxLag; negative: no limit.
	AlertMaxLag time.Duration
	// OnAlert, when set, is called with every alert, under the indexer's
	// lock: it must not block.
	OnAlert func(alert.Event)
	// Now is the clock of the alert windows; default time.Now.
	Now func() time.Time

	// LeaseTTL is how long the lease on the consumer name outlives its
	// holder (default bus.DefaultLeaseTTL): a stand-by takes over at most
	// this long after the active indexer died, at once after it stopped.
	LeaseTTL time.Duration

	// Registry receives the indexer's metrics (its counters and the
	// apply and alert latency histograms; api.Handler (pipeline/index/api) serves it on
	// /metrics); nil means a registry of its own. One registry takes one
	// indexer: [NewIndexer] fails on a second.
	Registry *prometheus.Registry

	// Logger receives lifecycle events; nil discards.
	Logger *slog.Logger
}

// Validate reports the first invalid field as a *ConfigError.
func (c IndexerConfig) Validate() error {
	switch {
	case c.JS == nil:
		return &ConfigError{Field: "js", Value: nil, Err: ErrInvalidConfig}
	case c.Dir == "":
		return &ConfigError{Field: "data_dir", Value: c.Dir, Err: ErrInvalidConfig}
	case c.CommitInterval < 0:
		return &ConfigError{Field: "commit_interval", Value: c.CommitInterval, Err: ErrInvalidConfig}
	case c.MaxFacts < 0:
		return &ConfigError{Field: "max_facts", Value: c.MaxFacts, Err: ErrInvalidConfig}
	}
	return c.Stream.Validate()
}

// Indexer keeps the aggregates of a stream's entries in a state that
// survives restarts: it consumes the entries through a durable consumer,
// applies them to an [Aggregator] over a [store.Store], and commits the state
// with the last stream sequence applied. A restart resumes at the next
// sequence (the consumer is repositioned there), so nothing is counted
// twice or missed; a redelivered message at or below the applied
// sequence is skipped. A state that belongs to another stream (deleted
// and recreated, another cluster) is detected at start and rebuilt from
// the stream, never applied to.
//
// Its query methods are safe for concurrent use with Run.
type Indexer struct {
	cfg IndexerConfig
	log *slog.Logger

	mu          sync.Mutex // guards agg and what follows
	agg         *Aggregator
	store       *store.Store
	identity    bus.StreamIdentity
	applied     uint64 // last stream sequence applied
	committed   uint64 // last stream sequence committed
	committedAt time.Time
	changed     map[sessionKey]bool

	consumer    *bus.Consumer
	ready       chan struct{} // closed once the state is open and the consumer positioned
	alerts      *alerting
	stage       *bus.Stage // the lease, the wait for the stream, the commit ticker, forged and gap counts
	hub         *hub
	totals      map[hostModel]*ModelTotals
	totalsDirty bool

	alertsFired atomic.Uint64
	metrics     indexerMetrics

	entries   atomic.Uint64 // entries applied since start
	skipped   atomic.Uint64 // redelivered entries skipped
	rebuilds  atomic.Uint64 // states discarded because they belonged to another stream
	reprices  atomic.Uint64 // states rebuilt because the price table changed
	commitErr atomic.Pointer[string]
}

// Meta names of the indexer's state.
const (
	metaSeq    = "seq"
	metaStream = "stream"
)

// NewIndexer checks cfg and returns an indexer; Run opens the state.
func NewIndexer(cfg IndexerConfig) (*Indexer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Name == "" {
		cfg.Name = DefaultConsumerName
	}
	if cfg.CommitInterval == 0 {
		cfg.CommitInterval = DefaultCommitInterval
	}
	if cfg.MaxFacts == 0 {
		cfg.MaxFacts = DefaultMaxFacts
	}
	if cfg.WebhookConsumer == "" {
		cfg.WebhookConsumer = DefaultWebhookConsumer
	}
	cfg.Stream = cfg.Stream.WithDefaults()
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	ix := &Indexer{
		cfg:     cfg,
		log:     discard(cfg.Logger).With(KeyComponent, "index"),
		changed: make(map[sessionKey]bool),
		ready:   make(chan struct{}),
		hub:     newHub(),
		totals:  make(map[hostModel]*ModelTotals),
	}
	stage, err := bus.NewStage(bus.StageConfig{
		JS: cfg.JS, Stream: cfg.Stream, Role: "indexer", Consumer: cfg.Name, LeaseTTL: cfg.LeaseTTL,
		CommitInterval: cfg.CommitInterval, Logger: ix.log, LeaseLogger: cfg.Logger, GapLevel: slog.LevelWarn,
		GapMessage: "entries aged out of the stream before they were indexed; the aggregates lack them",
	})
	if err != nil {
		return nil, err
	}
	ix.stage = stage
	if err := ix.register(cfg.Registry); err != nil {
		return nil, err
	}
	return ix, nil
}

// Ready is closed once Run has opened the state and positioned the
// consumer: queries answer from then on.
func (ix *Indexer) Ready() <-chan struct{} { return ix.ready }

// Run opens the state, resumes it and applies the stream until ctx ends;
// then it commits what was applied and closes the state. It returns nil
// after a stop by ctx, and the error that stopped it otherwise (a state
// that cannot be written, a stream it cannot read).
func (ix *Indexer) Run(ctx context.Context) (err error) {
	st, seq, err := ix.open(ctx)
	if err != nil {
		return err
	}
	defer func() {
		ix.hub.close()
		ix.mu.Lock()
		if cerr := ix.commitLocked(); err == nil && cerr != nil {
			err = cerr
		}
		ix.agg, ix.store = nil, nil
		ix.mu.Unlock()
		if cerr := ix.stopAlerts(); err == nil && cerr != nil {
			err = cerr
		}
		if cerr := st.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close indexer state: %w", cerr)
		}
	}()
	if err := ix.startAlerts(ctx, st); err != nil {
		return err
	}
	close(ix.ready)
	ix.log.Info("indexer started", KeyState, ix.cfg.Dir, "resume_seq", seq+1, KeyStream, ix.identity.String(), "consumer", ix.cfg.Name)
	// One process per durable consumer: a second indexer of the same
	// name stands by in the stage, serving the state it has, and takes
	// over when the active one stops or dies.
	return ix.stage.Run(ctx, func(held context.Context) error {
		err := ix.consume(held)
		if errors.Is(err, ErrCorruptState) {
			// A record read back does not decode: nothing of this state
			// can be trusted. Start over from the stream.
			ix.log.Error("indexer state is corrupt; rebuilding it from the stream", KeyError, err)
			return bus.StandBy(err, func() error { return ix.rebuild(st) })
		}
		ix.mu.Lock()
		cerr := ix.commitLocked()
		ix.mu.Unlock()
		switch {
		case ctx.Err() != nil:
			return cerr
		case errors.Is(context.Cause(held), bus.ErrLeaseLost):
			return nil // the stage stands by
		}
		return errors.Join(err, cerr)
	})
}

// rebuild discards the state and starts an empty one, applied from the
// start of the stream.
func (ix *Indexer) rebuild(st *store.Store) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.rebuilds.Add(1)
	if err := st.Reset(); err != nil {
		return err
	}
	agg, err := New(Config{Pricer: ix.cfg.Pricer, Store: st, Turns: true, OnUsage: ix.observe})
	if err == nil {
		err = agg.buildListing()
	}
	if err != nil {
		return err
	}
	ix.agg = agg
	ix.applied, ix.committed = 0, 0
	clear(ix.totals)
	clear(ix.changed)
	ix.totalsDirty = true
	// The alert evaluator keeps its state: it skips the observations of
	// sequences it already applied, so the replay fires nothing again.
	return nil
}

// consume applies the stream from the sequence after the last committed
// one until ctx ends (the lease lost, or the indexer stopped).
func (ix *Indexer) consume(ctx context.Context) error {
	ix.mu.Lock()
	start := ix.committed + 1
	ix.applied = ix.committed // a stand-by resumes from what its state holds
	ix.mu.Unlock()
	c, err := bus.NewConsumer(ix.cfg.JS, bus.ConsumerConfig{
		Name: ix.cfg.Name, Stream: ix.cfg.Stream, StartSeq: start, Lite: true, Logger: ix.cfg.Logger,
	})
	if err != nil {
		return err
	}
	ix.mu.Lock()
	ix.consumer = c
	ix.mu.Unlock()
	ix.log.Info("indexer active", "resume_seq", start, "consumer", ix.cfg.Name)
	var side []func(context.Context)
	if al := ix.alerts; al != nil && al.webhook != nil {
		side = append(side, func(ctx context.Context) { ix.sendAlerts(ctx, al.webhook) })
	}
	// The commit loop returns on a corrupt state: the run stops with it.
	err = ix.stage.Consume(ctx, c, ix.apply, ix.commitLoop, side...)
	if agg := ix.aggErr(); errors.Is(agg, ErrCorruptState) || errors.As(agg, new(*store.Error)) {
		err = agg
	}
	if errors.Is(err, bus.ErrStartAhead) {
		return fmt.Errorf("indexer state is ahead of the stream (applied %d): remove %s to rebuild it: %w", start-1, ix.cfg.Dir, err)
	}
	return err
}

// aggErr returns the aggregator's store failure, if any.
func (ix *Indexer) aggErr() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.agg == nil {
		return nil
	}
	return ix.agg.Err()
}

// Active reports whether the indexer holds its consumer's lease and
// applies the stream (false while it stands by).
func (ix *Indexer) Active() bool { return ix.stage.Active() }

// open opens the state, checks that it belongs to the stream, and returns
// the last sequence it applied.
func (ix *Indexer) open(ctx context.Context) (*store.Store, uint64, error) {
	st, err := store.Open(store.Config{Dir: ix.cfg.Dir, Logger: ix.cfg.Logger})
	if err != nil {
		return nil, 0, err
	}
	seq, saved, err := readPosition(st)
	if err == nil {
		var cur bus.StreamIdentity
		cur, err = ix.stage.WaitStream(ctx, saved)
		var mismatch *bus.StreamMismatchError
		if errors.As(err, &mismatch) {
			ix.log.Warn("indexer state belongs to another stream; rebuilding it from the stream", "saved", mismatch.Saved.String(), "stream", mismatch.Current.String())
			ix.rebuilds.Add(1)
			err = st.Reset()
			seq, saved = 0, bus.StreamIdentity{}
		}
		ix.identity = cur
	}
	if err != nil {
		st.Close()
		return nil, 0, err
	}
	acfg := Config{Pricer: ix.cfg.Pricer, Store: st, Turns: true, OnUsage: ix.observe}
	agg, err := New(acfg)
	if err == nil {
		// Every session is read once: one that cannot be is a corrupt
		// state, rebuilt below.
		err = agg.buildListing()
	}
	var layout *LayoutError
	switch {
	case errors.As(err, &layout):
		// Its keys would be misread (sessions of one id on two hosts or
		// of two formats merged, or split from their facts): start over.
		ix.log.Warn("indexer state has an older layout; rebuilding it from the stream",
			"layout", layout.Have, "want", layout.Want)
		ix.rebuilds.Add(1)
	case errors.Is(err, ErrCorruptState):
		ix.log.Warn("indexer state is corrupt; rebuilding it from the stream", KeyError, err)
		ix.rebuilds.Add(1)
	}
	rebuild := layout != nil || errors.Is(err, ErrCorruptState)
	if !rebuild && err == nil && seq > 0 {
		// A state read as it is, priced with another table: reprice it
		// (a state rebuilt anyway is priced with this table).
		var reprice bool
		if reprice, err = ix.repriceNeeded(ctx, st, seq); err == nil && reprice {
			ix.reprices.Add(1)
			rebuild = true
		}
	}
	if rebuild {
		if err = st.Reset(); err == nil {
			seq = 0
			if agg, err = New(acfg); err == nil {
				err = agg.buildListing()
			}
		}
	}
	if err == nil {
		err = ix.restoreTotals(st)
	}
	if err != nil {
		st.Close()
		return nil, 0, err
	}
	ix.mu.Lock()
	ix.agg, ix.store = agg, st
	ix.applied, ix.committed, ix.committedAt = seq, seq, time.Now()
	ix.mu.Unlock()
	return st, seq, nil
}

// readPosition reads the last sequence applied and the stream identity of
// a state (0 and zero for a new one).
func readPosition(st *store.Store) (uint64, bus.StreamIdentity, error) {
	var id bus.StreamIdentity
	v, err := st.Meta(metaSeq)
	if err != nil || v == nil {
		return 0, id, err
	}
	seq, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil {
		return 0, id, fmt.Errorf("%w: sequence %q", ErrCorruptState, v)
	}
	v, err = st.Meta(metaStream)
	if err != nil {
		return 0, id, err
	}
	if v != nil {
		if err := json.Unmarshal(v, &id); err != nil {
			return 0, id, fmt.Errorf("%w: stream identity: %v", ErrCorruptState, err)
		}
	}
	return seq, id, nil
}

// apply is the consumer's handler: it applies a batch and commits when
// the commit interval has passed.
func (ix *Indexer) apply(_ context.Context, b *bus.Batch) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.stage.NoteGap(b.Gap)
	// The entries of a message share its sequence: a message is skipped
	// whole when the state holds it, taken whole otherwise.
	floor := ix.applied
	now := time.Now()
	for i := range b.Entries {
		d := &b.Entries[i]
		if d.Seq <= floor {
			ix.skipped.Add(1)
			continue // applied before (a redelivery after a restart)
		}
		if !ix.stage.Matches(d) {
			// The subject is what the server checked (a tailer's identity
			// may publish only its own host's subjects); a body naming
			// another host or format is forged or broken, never counted.
			ix.applied = d.Seq
			continue
		}
		if ix.alerts != nil && d.Seq != ix.alerts.seq {
			// Alert ids are (sequence, count within it): the entries of
			// a batch message share the sequence and keep counting.
			ix.alerts.seq, ix.alerts.part = d.Seq, 0
		}
		ix.agg.Add(&d.Entry)
		ix.applied = d.Seq
		ix.changed[sessionKey{d.Entry.Format, d.Entry.Host, d.Entry.SessionID}] = true
		ix.entries.Add(1)
		if !d.Stored.IsZero() {
			ix.metrics.applyLatency.Observe(max(now.Sub(d.Stored), 0).Seconds())
		}
	}
	ix.applied = max(ix.applied, b.Last)
	if err := ix.agg.Err(); err != nil {
		return fmt.Errorf("%w: %w", bus.ErrStopConsuming, err)
	}
	if time.Since(ix.committedAt) >= ix.cfg.CommitInterval {
		if err := ix.commitLocked(); err != nil {
			return fmt.Errorf("%w: %w", bus.ErrStopConsuming, err)
		}
	}
	return nil
}

// commitLoop commits what the last batches applied when no new batch
// comes to do it, on the stage's commit ticks.
func (ix *Indexer) commitLoop(ctx context.Context, tick <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			if ix.Stats().Consumer.Pending == 0 {
				ix.advanceAlerts() // caught up: the clock may slide the windows
			}
			ix.mu.Lock()
			err := ix.commitLocked()
			ix.mu.Unlock()
			if err != nil {
				msg := err.Error()
				ix.commitErr.Store(&msg)
				ix.log.Error("committing the indexer state", KeyError, err)
				if errors.Is(err, ErrCorruptState) || errors.As(err, new(*store.Error)) {
					return // the consumer stops with it: a corrupt state is rebuilt, a failed disk ends Run
				}
			}
		}
	}
}

// commitLocked commits the state if anything was applied since the last
// commit; ix.mu must be held.
func (ix *Indexer) commitLocked() error {
	if ix.agg == nil || ix.applied == ix.committed && ix.agg.err == nil && len(ix.changed) == 0 && (ix.alerts == nil || ix.alerts.fired == 0) {
		return nil
	}
	id, err := json.Marshal(ix.identity)
	if err != nil {
		return err
	}
	meta := map[string][]byte{metaSeq: []byte(strconv.FormatUint(ix.applied, 10)), metaStream: id}
	if fp := ix.pricesFingerprint(); fp != "" {
		meta[metaPrices] = []byte(fp)
	}
	// Settle first: moved calls are observations too, and every alert
	// they fire must be stored before the state says it fired.
	ix.agg.settle()
	if err := ix.flushAlerts(meta); err != nil {
		return err
	}
	if ix.totalsDirty {
		t, err := ix.encodeTotals()
		if err != nil {
			return err
		}
		meta[metaTotals] = t
	}
	if err := ix.agg.Commit(meta, ix.cfg.MaxFacts); err != nil {
		return err
	}
	ix.committed, ix.committedAt, ix.totalsDirty = ix.applied, time.Now(), false
	if len(ix.changed) > 0 {
		changed := make([]Session, 0, len(ix.changed))
		for k := range ix.changed {
			if s, ok := ix.agg.Session(k.format, k.host, k.id); ok {
				changed = append(changed, s)
				ix.hub.publish("session", s)
			}
		}
		if ix.cfg.OnCommit != nil {
			ix.cfg.OnCommit(changed)
		}
	}
	clear(ix.changed)
	return nil
}

// IndexerStats are the indexer's counters, for metrics and health.
type IndexerStats struct {
	Applied, Committed uint64 // stream sequences
	Entries            uint64 // entries applied since start
	Skipped            uint64 // redelivered entries skipped
	GapMessages        uint64 // messages that aged out before they were indexed
	Forged             uint64 // entries skipped: host or format of the body not those of the subject
	Rebuilds           uint64
	Reprices           uint64 // states rebuilt from the stream because the price table changed
	Alerts             uint64 // alerts fired since start
	Active             bool   // holds the consumer's lease (else stands by)
	Consumer           bus.ConsumerStats
	CommitError        string // the last commit failure, if any
}

// Stats returns the counters.
func (ix *Indexer) Stats() IndexerStats {
	ix.mu.Lock()
	s := IndexerStats{Applied: ix.applied, Committed: ix.committed}
	ix.mu.Unlock()
	s.Entries, s.Skipped, s.GapMessages, s.Rebuilds = ix.entries.Load(), ix.skipped.Load(), ix.stage.GapMessages(), ix.rebuilds.Load()
	s.Alerts = ix.alertsFired.Load()
	s.Forged = ix.stage.Forged()
	s.Reprices = ix.reprices.Load()
	ix.mu.Lock()
	c := ix.consumer
	ix.mu.Unlock()
	if c != nil {
		s.Consumer = c.Stats()
	}
	s.Active = ix.stage.Active()
	if p := ix.commitErr.Load(); p != nil {
		s.CommitError = *p
	}
	return s
}

// ErrNotReady is returned by queries before Run opened the state, or after
// it stopped.
var ErrNotReady = errors.New("index: not ready")

// with runs fn on the aggregator under the lock.
func (ix *Indexer) with(fn func(a *Aggregator) error) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.agg == nil {
		return ErrNotReady
	}
	return fn(ix.agg)
}

// Query is [Aggregator.Query] on the indexer's state.
func (ix *Indexer) Query(q SessionQuery) (page []Session, next string, err error) {
	err = ix.with(func(a *Aggregator) error {
		page, next, err = a.Query(q)
		return err
	})
	return page, next, err
}

// Count is [Aggregator.Count] on the indexer's state.
func (ix *Indexer) Count(q SessionQuery) (n int, err error) {
	err = ix.with(func(a *Aggregator) error {
		n, err = a.Count(q)
		return err
	})
	return n, err
}

// UsageWithTotal is [Aggregator.UsageWithTotal] on the indexer's state.
func (ix *Indexer) UsageWithTotal(q UsageQuery) (rows []UsageRow, total UsageRow, err error) {
	err = ix.with(func(a *Aggregator) error {
		rows, total, err = a.UsageWithTotal(q)
		return err
	})
	return rows, total, err
}

// Usage is [Aggregator.Usage] on the indexer's state.
func (ix *Indexer) Usage(q UsageQuery) (rows []UsageRow, err error) {
	err = ix.with(func(a *Aggregator) error {
		rows, err = a.Usage(q)
		return err
	})
	return rows, err
}

// Session returns one session with its turns: the session of id, format
// and host. An empty format matches every format, a nil host every host
// (the API's bare id): when several sessions match, the error is an
// *[AmbiguousError] listing them; when none does, [ErrSessionNotFound].
func (ix *Indexer) Session(id string, format schema.Format, host *string) (s Session, turns []Turn, err error) {
	err = ix.with(func(a *Aggregator) error {
		var matches []SessionRef
		if format != "" && host != nil {
			matches = []SessionRef{{Format: format, Host: *host, SessionID: id}}
		} else {
			all, err := a.Find(id)
			if err != nil {
				return err
			}
			for _, r := range all {
				if (format == "" || r.Format == format) && (host == nil || r.Host == *host) {
					matches = append(matches, r)
				}
			}
		}
		switch len(matches) {
		case 0:
			return ErrSessionNotFound
		case 1:
		default:
			return &AmbiguousError{SessionID: id, Candidates: matches}
		}
		r := matches[0]
		var found bool
		if s, found = a.Session(r.Format, r.Host, r.SessionID); !found {
			if err := a.Err(); err != nil {
				return err
			}
			return ErrSessionNotFound
		}
		turns, _, err = a.Turns(r.Format, r.Host, r.SessionID)
		return err
	})
	return s, turns, err
}

// Sessions returns every session, as [Aggregator.Sessions] (for `run
// -once` and tests; the API pages with Query).
func (ix *Indexer) Sessions() (all []Session, err error) {
	err = ix.with(func(a *Aggregator) error {
		all = a.Sessions()
		return a.Err()
	})
	return all, err
}

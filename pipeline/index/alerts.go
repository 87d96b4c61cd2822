package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sessionpipe/sessionpipe/pipeline/bus"
	"github.com/sessionpipe/sessionpipe/pipeline/index/alert"
	"github.com/sessionpipe/sessionpipe/pipeline/index/store"
	"github.com/sessionpipe/sessionpipe/schema"
)

// Alerts: every change of what an API call counts for becomes an
// observation of the alert evaluator (package alert), tagged with the
// stream sequence of the entry being applied. A firing is logged,
// published on <prefix>.alerts.<rule> (in the alerts stream, with the
// event id as Nats-Msg-Id), which feeds the webhook (webhook.go). Before the
// state is committed with the evaluator's snapshot, every event fired
// since the last commit is acknowledged by JetStream: a firing is never
// recorded as done without being published. After a crash, the entries
// applied since the last commit are applied again, fire the same events
// with the same ids, and the stream drops the copies it already has: no
// refire, none lost.

// Alert defaults.
const (
	// DefaultAlertMaxLag: a firing caused by an entry older than this is
	// recorded but not published (see alert.Config.MaxLag): a state
	// rebuilt from the start of a stream does not page anyone about last
	// month.
	DefaultAlertMaxLag = time.Hour
	// DefaultRecentAlerts is how many alerts GET /api/alerts keeps.
	DefaultRecentAlerts = 500
	// alertFlushTimeout bounds the wait for alert acknowledgements at a
	// commit; the commit is tried again at the next interval.
	alertFlushTimeout = 5 * time.Second
)

// Meta names of the alert state.
const (
	metaAlerts       = "alerts"
	metaRecentAlerts = "alerts_recent"
)

// AlertStreamName returns the name of the stream that keeps the alerts
// of the entries stream named name.
func AlertStreamName(name string) string { return name + "_ALERTS" }

// EnsureAlertStream makes sure the alerts stream of sc exists, as
// [bus.EnsureStreamConfig] does: created with subjects <prefix>.alerts.>,
// 30 days of history, a duplicate window of two hours and sc's storage
// and replicas when missing; kept as it is when it exists (the settings
// that differ logged to sc.Logger, a missing subject added); returned
// once it has a leader.
func EnsureAlertStream(ctx context.Context, js jetstream.JetStream, sc bus.StreamConfig) (jetstream.Stream, error) {
	sc = sc.WithDefaults()
	return bus.EnsureStreamConfig(ctx, js, jetstream.StreamConfig{
		Name:        AlertStreamName(sc.Name),
		Description: "sessionpipe token-spend alerts",
		Subjects:    []string{alert.AlertsFilter(sc.Prefix)},
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		MaxAge:      30 * 24 * time.Hour,
		MaxBytes:    -1,
		MaxMsgs:     -1,
		Duplicates:  2 * time.Hour,
		Storage:     sc.Storage,
		Replicas:    sc.Replicas,
	}, sc.Logger)
}

// alerting is the indexer's alert machinery; nil fields mean no rules.
type alerting struct {
	ev      *alert.Evaluator
	pub     *bus.Publisher
	webhook jetstream.Consumer // the webhook's durable consumer (webhook.go); nil: none
	prefix  string
	recent  []alert.Event // newest last, at most DefaultRecentAlerts
	// suppressed are the last firings -alert-max-lag kept back (newest
	// last, at most DefaultRecentAlerts), their total since start, and
	// those not yet logged.
	suppressed      []alert.Event
	suppressedTotal uint64
	suppressedNew   uint64
	seq             uint64 // stream sequence of the entry being applied
	part            int    // observations of that entry so far
	fired           int    // events since the last commit
}

// startAlerts builds the evaluator from the rules, restores its snapshot
// from the state, and prepares the publisher of alert events.
func (ix *Indexer) startAlerts(ctx context.Context, st *store.Store) error {
	al := &alerting{prefix: ix.cfg.Stream.Prefix}
	if v, err := st.Meta(metaRecentAlerts); err != nil {
		return err
	} else if v != nil {
		if err := json.Unmarshal(v, &al.recent); err != nil {
			ix.log.Warn("recent alerts unreadable; starting an empty list", KeyError, err)
		}
	}
	ix.alerts = al
	if len(ix.cfg.Rules) == 0 {
		return ix.startWebhook(ctx, al) // what earlier runs published is still sent
	}
	lag := ix.alertMaxLag()
	ev, err := alert.New(alert.Config{Rules: ix.cfg.Rules, Now: ix.cfg.Now, MaxLag: max(lag, 0), Logger: ix.cfg.Logger,
		OnSuppressed: al.suppress})
	if err != nil {
		return err
	}
	sc := ix.cfg.Stream
	sc.Logger = ix.cfg.Logger
	if _, err := EnsureAlertStream(ctx, ix.cfg.JS, sc); err != nil {
		return err
	}
	if err := ix.startWebhook(ctx, al); err != nil { // before anything fires
		return err
	}
	if al.pub, err = bus.NewPublisher(ix.cfg.JS, bus.PublisherConfig{Logger: ix.cfg.Logger}); err != nil {
		return err
	}
	al.ev = ev
	if v, err := st.Meta(metaAlerts); err != nil {
		return err
	} else if v != nil {
		events, err := ev.Restore(v)
		if err != nil {
			ix.log.Warn("alert state unreadable; rules start empty and may fire again", KeyError, err)
		}
		ix.mu.Lock()
		ix.fire(events) // thresholds changed since the snapshot
		ix.mu.Unlock()
	}
	return nil
}

// suppress records a firing the max lag kept back (the evaluator calls it
// from Observe, under ix.mu, or while restoring, before the indexer runs).
func (al *alerting) suppress(e alert.Event) {
	al.suppressed = append(al.suppressed, e)
	if n := len(al.suppressed) - DefaultRecentAlerts; n > 0 {
		al.suppressed = append(al.suppressed[:0], al.suppressed[n:]...)
	}
	al.suppressedTotal++
	al.suppressedNew++
}

// negate returns u with every counter negated.
func negate(u schema.Usage) schema.Usage {
	return schema.Usage{Input: -u.Input, Output: -u.Output, CacheRead: -u.CacheRead, CacheWrite: -u.CacheWrite,
		CacheWrite5m: -u.CacheWrite5m, CacheWrite1h: -u.CacheWrite1h, Reasoning: -u.Reasoning}
}

// observe feeds a usage change to the evaluator (the Aggregator's OnUsage
// hook; ix.mu is held).
func (ix *Indexer) observe(c UsageChange) {
	ix.count(c)
	al := ix.alerts
	if al == nil || al.ev == nil {
		return
	}
	o := alert.Observation{
		Seq: al.seq, Part: al.part, Time: c.TS, SessionID: c.SessionID, Host: c.Host, Project: c.Project,
		Model: c.Model, Format: c.Format, Labels: c.Labels, Unpriced: c.Unpriced,
		Tokens: c.Tokens, CostUSD: c.CostUSD,
	}
	al.part++
	if c.Sign < 0 {
		o.Tokens = negate(c.Tokens)
		o.CostUSD = -c.CostUSD
		o.Unpriced = false // a call taken back names no unpriced model
	}
	events := al.ev.Observe(o)
	ix.metrics.observeAlerts(len(events), c.TS)
	ix.fire(events)
}

// fire logs and publishes events; ix.mu is held.
func (ix *Indexer) fire(events []alert.Event) {
	al := ix.alerts
	for _, e := range events {
		ix.log.Warn("alert", KeyAlert, e)
		al.recent = append(al.recent, e)
		if n := len(al.recent) - DefaultRecentAlerts; n > 0 {
			al.recent = append(al.recent[:0], al.recent[n:]...)
		}
		al.fired++
		ix.alertsFired.Add(1)
		if al.pub != nil {
			data, err := json.Marshal(e)
			if err == nil {
				m := &nats.Msg{Subject: alert.Subject(al.prefix, e.Rule), Data: data, Header: nats.Header{bus.HeaderMsgID: []string{e.ID}}}
				// Publish blocks only on a full window; done errors are
				// seen by the Flush before the commit.
				err = al.pub.Publish(context.Background(), m, nil)
			}
			if err != nil {
				ix.log.Error("publishing an alert", "alert", e.ID, KeyError, err)
			}
		}
		ix.liveAlert(e)
	}
}

// flushAlerts waits until every alert fired since the last commit is
// stored by JetStream, and adds the alert state to the commit's meta.
func (ix *Indexer) flushAlerts(meta map[string][]byte) error {
	al := ix.alerts
	if al == nil {
		return nil
	}
	if al.pub != nil && al.fired > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), alertFlushTimeout)
		err := al.pub.Flush(ctx)
		cancel()
		if err != nil {
			return fmt.Errorf("alerts not yet stored by JetStream: %w", err)
		}
	}
	if al.ev != nil {
		snap, err := al.ev.Snapshot()
		if err != nil {
			return err
		}
		meta[metaAlerts] = snap
	}
	if al.suppressedNew > 0 {
		ix.log.Info("alerts on history suppressed: recorded, not sent (listed by /api/alerts)",
			"count", al.suppressedNew, "total", al.suppressedTotal, "alert_max_lag", ix.alertMaxLag())
		al.suppressedNew = 0
	}
	if al.fired > 0 {
		recent, err := json.Marshal(al.recent)
		if err != nil {
			return err
		}
		meta[metaRecentAlerts] = recent
	}
	al.fired = 0
	return nil
}

// stopAlerts closes the alert publisher.
func (ix *Indexer) stopAlerts() error {
	if ix.alerts == nil || ix.alerts.pub == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), alertFlushTimeout)
	defer cancel()
	err := ix.alerts.pub.Close(ctx)
	if errors.Is(err, bus.ErrClosed) {
		return nil
	}
	return err
}

// alertMaxLag is the max lag in effect: the configured one, the default
// for zero, none (0) for a negative one.
func (ix *Indexer) alertMaxLag() time.Duration {
	lag := ix.cfg.AlertMaxLag
	if lag == 0 {
		lag = DefaultAlertMaxLag
	}
	return max(lag, 0)
}

// SuppressedAlerts returns the most recent firings the max lag kept back
// (each with its Suppressed reason), newest first, and how many there
// were since the indexer started.
func (ix *Indexer) SuppressedAlerts(limit int) ([]alert.Event, uint64) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.alerts == nil {
		return nil, 0
	}
	s := ix.alerts.suppressed
	if limit <= 0 || limit > len(s) {
		limit = len(s)
	}
	out := make([]alert.Event, 0, limit)
	for i := len(s) - 1; i >= len(s)-limit; i-- {
		out = append(out, s[i])
	}
	return out, ix.alerts.suppressedTotal
}

// Alerts returns the most recent alerts, newest first.
func (ix *Indexer) Alerts(limit int) []alert.Event {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.alerts == nil {
		return nil
	}
	n := len(ix.alerts.recent)
	if limit <= 0 || limit > n {
		limit = n
	}
	out := make([]alert.Event, 0, limit)
	for i := n - 1; i >= n-limit; i-- {
		out = append(out, ix.alerts.recent[i])
	}
	return out
}

// ReloadRules replaces the alert rules (the daemon calls it on SIGHUP with
// rules it parsed): rules kept by name keep their state; changed
// thresholds are evaluated again, and what fires is handled at once.
func (ix *Indexer) ReloadRules(rules []alert.Rule) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.alerts == nil {
		return ErrNotReady
	}
	if ix.alerts.ev == nil {
		if len(rules) == 0 {
			return nil
		}
		return errors.New("index: alert rules can be reloaded only when the indexer started with rules")
	}
	events, err := ix.alerts.ev.Reload(rules)
	if err != nil {
		return err
	}
	ix.fire(events)
	return nil
}

// advanceAlerts slides the alert windows by the clock; called while the
// indexer is caught up with the stream.
func (ix *Indexer) advanceAlerts() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.alerts != nil && ix.alerts.ev != nil {
		ix.alerts.ev.Advance()
	}
}

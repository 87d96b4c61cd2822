package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// How EnsureStreamConfig waits for a JetStream that does not answer yet.
const (
	ensureBackoffMin = 100 * time.Millisecond
	ensureBackoffMax = 2 * time.Second
	ensureLogEvery   = 30 * time.Second
)

// Errors of a cluster that cannot serve the stream yet: "JetStream system
// temporarily unavailable" (JSClusterNotAvailErr: no meta leader) and "no
// suitable peers for placement" (JSClusterNoPeersErrF: servers not up or
// not known yet; also more replicas than the cluster will ever have,
// which the repeated warning then shows).
const (
	jsClusterNotAvail jetstream.ErrorCode = 10008
	jsClusterNoPeers  jetstream.ErrorCode = 10005
)

// EnsureStreamConfig is [EnsureStream] for a stream described in
// JetStream's own terms (the indexer's alerts stream): it creates want
// when no stream of its name exists; otherwise it keeps the stream's
// settings, logs a warning for each that differs from want, and adds the
// subjects of want that the stream's subjects do not cover. It returns
// once the stream has a leader, asking again while JetStream does not
// answer or cannot serve the stream yet (timeouts, a cluster without a
// meta leader or with too few servers up) until ctx ends.
func EnsureStreamConfig(ctx context.Context, js jetstream.JetStream, want jetstream.StreamConfig, log *slog.Logger) (jetstream.Stream, error) {
	log = discard(log).With(KeyStream, want.Name)
	r := &ensurer{js: js, log: log, limit: rateLimiter{interval: ensureLogEvery}}
	var (
		s       jetstream.Stream
		created bool
	)
	err := r.do(ctx, func(ctx context.Context) error {
		var err error
		s, err = js.Stream(ctx, want.Name)
		if !errors.Is(err, jetstream.ErrStreamNotFound) {
			return err
		}
		s, err = js.CreateStream(ctx, want)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			// Another process created it in the meantime, with its
			// settings: those are the stream's now.
			s, err = js.Stream(ctx, want.Name)
			return err
		}
		created = err == nil
		return err
	})
	if err != nil {
		return nil, r.fail(ctx, want.Name, err)
	}
	if created {
		log.Info("stream created", "subjects", want.Subjects, "max_age", showAge(want.MaxAge), "max_bytes", showLimit(want.MaxBytes),
			"duplicate_window", want.Duplicates.String(), "replicas", max(want.Replicas, 1))
	} else {
		have := s.CachedInfo().Config
		for _, d := range StreamSettingDiffs(have, want) {
			log.Warn("stream setting differs from this process's; keeping the stream's (sessionpipe stream update changes it)",
				"setting", d.Setting, "stream_value", d.From, "flag_value", d.To)
		}
		if missing := missingSubjects(have.Subjects, want.Subjects); len(missing) > 0 {
			upd := have
			upd.Subjects = append(slices.Clone(have.Subjects), missing...)
			err := r.do(ctx, func(ctx context.Context) error {
				var err error
				s, err = js.UpdateStream(ctx, upd)
				return err
			})
			if err != nil {
				return nil, r.fail(ctx, want.Name, fmt.Errorf("add subjects %q: %w", missing, err))
			}
			log.Warn("subjects added to the stream", "added", missing, "subjects", upd.Subjects)
		}
	}
	if err := r.waitLeader(ctx, s); err != nil {
		return nil, r.fail(ctx, want.Name, err)
	}
	return s, nil
}

// ensurer asks JetStream again while it does not answer.
type ensurer struct {
	js     jetstream.JetStream
	log    *slog.Logger
	limit  rateLimiter
	waited time.Time // when the first unanswered request was, zero if none
}

// do calls fn with a context bounded by the JetStream API timeout until
// it succeeds, fails for good, or ctx ends.
func (r *ensurer) do(ctx context.Context, fn func(context.Context) error) error {
	wait := ensureBackoffMin
	for {
		actx, cancel := context.WithTimeout(ctx, r.js.Options().DefaultTimeout)
		err := fn(actx)
		cancel()
		if err == nil {
			if !r.waited.IsZero() {
				r.log.Info("JetStream answers again", "waited", time.Since(r.waited).Round(time.Millisecond).String())
				r.waited = time.Time{}
			}
			return nil
		}
		if !r.unanswered(ctx, err) {
			return err
		}
		if err := r.pause(ctx, &wait, "JetStream cannot serve the stream yet; asking again", KeyError, err); err != nil {
			return err
		}
	}
}

// waitLeader returns once the stream reports a leader: its creation (or a
// cluster's start) may have answered before one was elected.
func (r *ensurer) waitLeader(ctx context.Context, s jetstream.Stream) error {
	info := s.CachedInfo()
	wait := ensureBackoffMin
	for info.Cluster != nil && info.Cluster.Leader == "" {
		if err := r.pause(ctx, &wait, "waiting for the stream to elect a leader", "replicas", info.Config.Replicas); err != nil {
			return err
		}
		err := r.do(ctx, func(ctx context.Context) error {
			i, err := s.Info(ctx)
			if err == nil {
				info = i
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// pause logs (rate-limited) and waits *wait, doubling it up to the
// maximum; it returns context.Cause when ctx ends first.
func (r *ensurer) pause(ctx context.Context, wait *time.Duration, msg string, args ...any) error {
	if r.waited.IsZero() {
		r.waited = time.Now()
	}
	if ok, suppressed := r.limit.allow(time.Now()); ok {
		r.log.Warn(msg, append(args, "waiting", time.Since(r.waited).Round(time.Second).String(), KeySuppressed, suppressed)...)
	}
	t := time.NewTimer(*wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
	}
	*wait = min(2**wait, ensureBackoffMax)
	return nil
}

// unanswered reports whether err means that JetStream did not answer, or
// cannot serve the stream yet (and may later), not that it refused.
func (r *ensurer) unanswered(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return true
	case errors.As(err, &apiErr):
		return apiErr.ErrorCode == jsClusterNotAvail || apiErr.ErrorCode == jsClusterNoPeers
	}
	return false
}

// fail returns the cancellation as is, other errors wrapped.
func (r *ensurer) fail(ctx context.Context, name string, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return fmt.Errorf("ensure stream %s: %w", name, err)
}

// missingSubjects returns the subjects of want that no subject of have
// covers.
func missingSubjects(have, want []string) []string {
	var missing []string
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h string) bool { return server.SubjectMatchesFilter(w, h) }) {
			missing = append(missing, w)
		}
	}
	return missing
}

// SettingDiff is one of the [StreamSettings] on which two stream
// configurations differ, with both values.
type SettingDiff struct {
	Setting  string
	From, To string
}

// StreamSetting is one of the settings sessionpipe chooses for a stream,
// its value as people read it ("unlimited", "2h0m0s").
type StreamSetting struct {
	Name  string // retention, discard, max_age, max_bytes, max_msgs, duplicate_window, storage, replicas
	Value string
}

// StreamSettings returns the settings sessionpipe chooses for a stream,
// in that order. Limits of 0 and -1 are the same (none).
func StreamSettings(c jetstream.StreamConfig) []StreamSetting {
	return []StreamSetting{
		{"retention", c.Retention.String()},
		{"discard", c.Discard.String()},
		{"max_age", showAge(c.MaxAge)},
		{"max_bytes", showLimit(c.MaxBytes)},
		{"max_msgs", showLimit(c.MaxMsgs)},
		{"duplicate_window", c.Duplicates.String()},
		{"storage", c.Storage.String()},
		{"replicas", strconv.Itoa(max(c.Replicas, 1))},
	}
}

// StreamSettingDiffs returns the [StreamSettings] on which from and to
// differ; subjects, sources and the rest are not compared.
func StreamSettingDiffs(from, to jetstream.StreamConfig) []SettingDiff {
	a, b := StreamSettings(from), StreamSettings(to)
	var out []SettingDiff
	for i := range a {
		if a[i].Value != b[i].Value {
			out = append(out, SettingDiff{Setting: a[i].Name, From: a[i].Value, To: b[i].Value})
		}
	}
	return out
}

// showAge renders a stream's MaxAge: 0 is "unlimited".
func showAge(d time.Duration) string {
	if d <= 0 {
		return "unlimited"
	}
	return d.String()
}

// showLimit renders a stream's MaxBytes or MaxMsgs: 0 and -1 are
// "unlimited".
func showLimit(n int64) string {
	if n <= 0 {
		return "unlimited"
	}
	return strconv.FormatInt(n, 10)
}

// StreamChange is what [UpdateStream] changes; nil fields stay as they
// are.
type StreamChange struct {
	MaxAge          *time.Duration // 0: unlimited
	DuplicateWindow *time.Duration // positive; at most MaxAge when that is set
	MaxBytes        *int64         // 0: unlimited
	Replicas        *int           // 1 to 5; more than 1 needs a cluster
}

// UpdateStream changes the settings of stream name that ch sets, and only
// those, and returns its configuration before and after. It is the
// explicit way to change what [EnsureStream] keeps. A change that leaves
// everything as it is sends nothing. It fails with a *[ConfigError] for
// an invalid value (the stream untouched), ErrStreamNotFound, or the
// server's refusal (a *jetstream.APIError: more replicas than the
// cluster has servers, say).
func UpdateStream(ctx context.Context, js jetstream.JetStream, name string, ch StreamChange) (before, after jetstream.StreamConfig, err error) {
	s, err := js.Stream(ctx, name)
	if err != nil {
		return before, after, fmt.Errorf("stream %s: %w", name, err)
	}
	before = s.CachedInfo().Config
	after = before
	if ch.MaxAge != nil {
		after.MaxAge = *ch.MaxAge
	}
	if ch.DuplicateWindow != nil {
		after.Duplicates = *ch.DuplicateWindow
	}
	if ch.MaxBytes != nil {
		after.MaxBytes = *ch.MaxBytes
		if after.MaxBytes == 0 {
			after.MaxBytes = -1
		}
	}
	if ch.Replicas != nil {
		after.Replicas = *ch.Replicas
	}
	switch {
	case after.MaxAge < 0:
		return before, before, invalid("max_age", after.MaxAge, "must not be negative")
	case after.Duplicates <= 0:
		return before, before, invalid("duplicate_window", after.Duplicates, "must be positive")
	case after.MaxAge > 0 && after.Duplicates > after.MaxAge:
		return before, before, invalid("duplicate_window", after.Duplicates, "must not exceed max_age "+after.MaxAge.String())
	case after.MaxBytes < -1:
		return before, before, invalid("max_bytes", after.MaxBytes, "must not be negative")
	case after.Replicas < 1 || after.Replicas > maxReplicas:
		return before, before, invalid("replicas", after.Replicas, "must be 1 to 5")
	}
	if len(StreamSettingDiffs(before, after)) == 0 {
		return before, before, nil
	}
	s, err = js.UpdateStream(ctx, after)
	if err != nil {
		if ctx.Err() != nil {
			return before, before, context.Cause(ctx)
		}
		return before, before, fmt.Errorf("update stream %s: %w", name, err)
	}
	return before, s.CachedInfo().Config, nil
}

package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Lease defaults.
const (
	// DefaultLeaseBucket is the JetStream KV bucket that holds leases.
	DefaultLeaseBucket = "sessionpipe_leases"

	// DefaultLeaseTTL is how long a lease lives without renewal: a holder
	// that dies is replaced after at most this long.
	DefaultLeaseTTL = 10 * time.Second

	// leaseMarkerTTL is how long the bucket keeps the marker JetStream
	// writes when a lease expires; watchers see it as a deletion.
	leaseMarkerTTL = time.Minute
)

// LeaseConfig configures [NewLease]. Role is required.
type LeaseConfig struct {
	// Role names what the lease guards, e.g. "indexer" or "compact": one
	// holder at a time per role. It is a KV key: letters, digits and
	// "-_=/." (not at either end).
	Role string

	// Bucket is the KV bucket. Default [DefaultLeaseBucket]. It is
	// created when missing, with per-key TTLs allowed.
	Bucket string

	// Holder names this contender in the lease value and in logs.
	// Default "<hostname>:<pid>:<random>"; it must be unique among the
	// contenders.
	Holder string

	// TTL is how long the lease lives without renewal, at least 1s. The
	// server counts whole seconds: a fraction is rounded up there, never
	// down. Default [DefaultLeaseTTL].
	TTL time.Duration

	// Renew is the interval between renewals. Default TTL/3; it must
	// leave time for at least one more renewal before the holder gives
	// the lease up (TTL minus a fifth of it).
	Renew time.Duration

	// Replicas is the bucket's replica count when it is created. Default 1.
	Replicas int

	// Logger receives acquisitions, losses and releases (Info) and
	// renewal failures (Warn, rate-limited). Nil discards them.
	Logger *slog.Logger
}

// Validate reports the first invalid field as a *[ConfigError].
func (c LeaseConfig) Validate() error {
	ttl := c.TTL
	if ttl == 0 {
		ttl = DefaultLeaseTTL
	}
	switch {
	case !validKey(c.Role):
		return invalid("role", c.Role, "required: letters, digits and -_=/. (not at either end)")
	case c.Bucket != "" && !validBucket(c.Bucket):
		return invalid("bucket", c.Bucket, "letters, digits, - and _")
	case c.TTL != 0 && c.TTL < time.Second:
		return invalid("ttl", c.TTL, "must be at least 1s")
	case c.Renew < 0:
		return invalid("renew", c.Renew, "must not be negative")
	case c.Renew > 0 && c.Renew >= ttl-leaseGuard(ttl):
		return invalid("renew", c.Renew, "must be below 4/5 of the ttl")
	case c.Replicas < 0 || c.Replicas > maxReplicas:
		return invalid("replicas", c.Replicas, "must be 1 to 5")
	}
	return nil
}

// leaseGuard is how long before the lease can expire at the server the
// holder gives it up: a fifth of the TTL.
func leaseGuard(ttl time.Duration) time.Duration { return ttl / 5 }

// Lease is a role held by one process at a time, for an active/standby
// pair of indexers or a compaction that must not run twice. It lives in
// a JetStream KV bucket as one key per role, written with compare-and-set
// on the key's revision and a per-message TTL.
//
// # Timing
//
// Nothing depends on clocks agreeing across hosts; each side measures
// durations on its own monotonic clock. The holder notes the time t0
// just before it sends a write (the create, or a renewal); the server
// stores the write after t0 and keeps it for at least TTL from then, so
// no one else can take the lease before t0+TTL. The holder treats the
// lease as lost at t0+TTL-TTL/5 unless a later write has been confirmed:
// its context is cancelled by a timer that does not depend on the
// renewing goroutine, so a holder whose renewals are stuck learns it
// lost the lease at least TTL/5 before a stand-by can take it (given
// that its process runs at all: a process frozen whole, e.g. by SIGSTOP,
// notices only when it runs again, and must not write anything guarded
// after a freeze without checking its context). A renewal that finds
// another revision in place (someone took over) ends the lease at once.
//
// Renewals publish to $KV.<bucket>.<role> directly (the KV API has no
// update with a TTL), so the JetStream context must not use a domain or
// API prefix.
//
// A stand-by waits in [Lease.Acquire]: it watches the key and tries
// again when it is deleted (a release) or expires (JetStream deletes an
// expired key and writes a marker that watchers see), and at least every
// Renew interval.
type Lease struct {
	js  jetstream.JetStream
	cfg LeaseConfig
	log *slog.Logger

	kvOnce sync.Mutex
	kv     jetstream.KeyValue

	mu       sync.Mutex
	held     bool
	rev      uint64
	lost     bool
	cancel   context.CancelCauseFunc
	watchdog *time.Timer
	stop     chan struct{}
	done     chan struct{}
	bg       sync.WaitGroup // deletions after a loss; Release waits for them

	// beforeRenew, when set (tests only), runs before each renewal: a
	// test blocks it to freeze the renewing goroutine.
	beforeRenew func()
}

// leaseValue is the JSON value of a lease key.
type leaseValue struct {
	Holder string `json:"holder"`
	TTL    string `json:"ttl"`
}

// NewLease checks cfg and returns a lease on js. It does not talk to the
// server: [Lease.Acquire] does.
func NewLease(js jetstream.JetStream, cfg LeaseConfig) (*Lease, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Bucket == "" {
		cfg.Bucket = DefaultLeaseBucket
	}
	if cfg.TTL == 0 {
		cfg.TTL = DefaultLeaseTTL
	}
	if cfg.Renew == 0 {
		cfg.Renew = cfg.TTL / 3
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	if cfg.Holder == "" {
		host, _ := os.Hostname()
		cfg.Holder = host + ":" + strconv.Itoa(os.Getpid()) + ":" + strconv.FormatUint(rand.Uint64()>>32, 36)
	}
	return &Lease{
		js:  js,
		cfg: cfg,
		log: discard(cfg.Logger).With(KeyComponent, "bus.lease", KeyLease, cfg.Role, KeyHolder, cfg.Holder),
	}, nil
}

// Holder returns this contender's name ([LeaseConfig.Holder]).
func (l *Lease) Holder() string { return l.cfg.Holder }

// Acquire waits until it holds the lease, or ctx ends (it then returns
// context.Cause(ctx)). It returns a context derived from ctx that stays
// alive while the lease is held and renewed in the background; its cause
// is [ErrLeaseLost] when the lease was lost, [ErrLeaseReleased] after
// [Lease.Release], or ctx's cause. The caller must stop the guarded work
// as soon as it is done, and call Release when it stops, so that a
// stand-by takes over at once; when ctx ends, the lease is released too.
//
// Acquire fails at once if the lease is already held by this Lease (a
// lease that was lost may be acquired again), and retries with backoff
// while JetStream is unreachable.
func (l *Lease) Acquire(ctx context.Context) (context.Context, error) {
	l.mu.Lock()
	held, lost := l.held, l.lost
	l.mu.Unlock()
	if held && !lost {
		return nil, fmt.Errorf("bus: lease %s already held", l.cfg.Role)
	}
	if held {
		_ = l.Release(ctx) // lost: only stops what is left of the last tenure
	}
	value, _ := json.Marshal(leaseValue{Holder: l.cfg.Holder, TTL: l.cfg.TTL.String()})
	attempt := 0
	var watch jetstream.KeyWatcher
	defer func() {
		if watch != nil {
			_ = watch.Stop()
		}
	}()
	for {
		kv, err := l.bucket(ctx)
		if err == nil {
			t0 := time.Now()
			var rev uint64
			rev, err = kv.Create(ctx, l.cfg.Role, value, jetstream.KeyTTL(serverTTL(l.cfg.TTL)))
			if err == nil {
				return l.grant(ctx, t0, rev), nil
			}
			if errors.Is(err, jetstream.ErrKeyExists) {
				attempt = 0
				if watch == nil {
					watch, _ = kv.Watch(ctx, l.cfg.Role, jetstream.UpdatesOnly())
				}
				if !l.wait(ctx, watch) {
					return nil, context.Cause(ctx)
				}
				continue
			}
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		attempt++
		l.log.Warn("lease: cannot reach the bucket; retrying", KeyAttempt, attempt, KeyError, err.Error())
		if !sleepCtx(ctx, backoff(attempt, DefaultReconnectWait, DefaultMaxReconnectWait)) {
			return nil, context.Cause(ctx)
		}
	}
}

// wait waits for a change of the key (its deletion or expiry) or the
// poll interval; it reports false when ctx ended.
func (l *Lease) wait(ctx context.Context, w jetstream.KeyWatcher) bool {
	var updates <-chan jetstream.KeyValueEntry
	if w != nil {
		updates = w.Updates()
	}
	t := time.NewTimer(min(l.cfg.Renew, time.Second))
	defer t.Stop()
	for {
		select {
		case _, ok := <-updates:
			if !ok {
				updates = nil // watcher gone: poll
				continue
			}
		case <-t.C:
		case <-ctx.Done():
			return false
		}
		return true
	}
}

// bucket returns the lease bucket, creating it when missing.
func (l *Lease) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	l.kvOnce.Lock()
	defer l.kvOnce.Unlock()
	if l.kv != nil {
		return l.kv, nil
	}
	kv, err := l.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:         l.cfg.Bucket,
		Description:    "sessionpipe leases: one holder per role",
		History:        1,
		Replicas:       l.cfg.Replicas,
		LimitMarkerTTL: leaseMarkerTTL,
	})
	if err != nil {
		return nil, fmt.Errorf("lease bucket %s: %w", l.cfg.Bucket, err)
	}
	l.kv = kv
	return kv, nil
}

// grant records the lease as held at revision rev, written after t0, and
// starts the watchdog and the renewal goroutine.
func (l *Lease) grant(ctx context.Context, t0 time.Time, rev uint64) context.Context {
	held, cancel := context.WithCancelCause(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held, l.lost, l.rev, l.cancel = true, false, rev, cancel
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	l.watchdog = time.AfterFunc(l.expiry(t0), l.expire)
	l.log.Info("lease acquired", "revision", rev)
	go l.renew(held, l.stop, l.done)
	return held
}

// expiry returns how long after now the holder must consider a write
// sent at t0 expired.
func (l *Lease) expiry(t0 time.Time) time.Duration {
	return time.Until(t0.Add(l.cfg.TTL - leaseGuard(l.cfg.TTL)))
}

// expire is the watchdog: no renewal was confirmed in time.
func (l *Lease) expire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held || l.lost {
		return
	}
	l.loseLocked("not renewed in time")
}

// loseLocked ends the lease: the holder's context is cancelled with
// ErrLeaseLost, and the key is deleted if it still holds our revision,
// so that a stand-by need not wait for it to expire.
func (l *Lease) loseLocked(why string) {
	l.lost = true
	l.cancel(ErrLeaseLost)
	l.log.Warn("lease lost", "reason", why)
	kv, rev := l.kv, l.rev
	l.bg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), l.cfg.TTL)
		defer cancel()
		_ = kv.Delete(ctx, l.cfg.Role, jetstream.LastRevision(rev))
	})
}

// renew renews the lease every Renew interval until stop is closed, the
// lease is lost or held ends (the caller's context), then releases it.
func (l *Lease) renew(held context.Context, stop, done chan struct{}) {
	defer close(done)
	t := time.NewTimer(l.cfg.Renew)
	defer t.Stop()
	var pendingSince time.Time // t0 of the first unconfirmed write since the last confirmed one
	for {
		select {
		case <-t.C:
		case <-stop:
			return
		case <-held.Done():
			l.releaseKey()
			return
		}
		if l.beforeRenew != nil {
			l.beforeRenew()
		}
		l.mu.Lock()
		lost, rev := l.lost, l.rev
		l.mu.Unlock()
		if lost {
			return
		}
		t0 := time.Now()
		if pendingSince.IsZero() {
			pendingSince = t0
		}
		newRev, err := l.write(held, rev)
		if err != nil && revisionMismatch(err) {
			// Our previous write may have been stored with its ack lost:
			// then the key holds our value at a newer revision.
			newRev, err = l.adopt(held)
		}
		next := l.cfg.Renew
		l.mu.Lock()
		switch {
		case l.lost:
			if err == nil {
				// Confirmed after the watchdog gave the lease up: hand it
				// back.
				l.rev = newRev
				l.loseLocked("renewed too late")
			}
			l.mu.Unlock()
			return
		case err == nil:
			l.rev = newRev
			l.watchdog.Reset(l.expiry(pendingSince))
			pendingSince = time.Time{}
		case errors.Is(err, errLeaseTaken):
			l.loseLocked("taken over")
			l.mu.Unlock()
			return
		default:
			next = min(l.cfg.Renew, 250*time.Millisecond)
			if held.Err() == nil {
				l.log.Warn("lease renewal failed; retrying", KeyError, err.Error())
			}
		}
		l.mu.Unlock()
		t.Reset(next)
	}
}

// errLeaseTaken reports that the key holds another holder's value.
var errLeaseTaken = errors.New("bus: lease taken by another holder")

// write renews the key at revision rev with a fresh TTL.
func (l *Lease) write(ctx context.Context, rev uint64) (uint64, error) {
	value, _ := json.Marshal(leaseValue{Holder: l.cfg.Holder, TTL: l.cfg.TTL.String()})
	ctx, cancel := context.WithTimeout(ctx, l.cfg.Renew)
	defer cancel()
	m := &nats.Msg{Subject: "$KV." + l.cfg.Bucket + "." + l.cfg.Role, Data: value, Header: nats.Header{}}
	ack, err := l.js.PublishMsg(ctx, m,
		jetstream.WithExpectLastSequencePerSubject(rev), jetstream.WithMsgTTL(serverTTL(l.cfg.TTL)))
	if err != nil {
		return 0, err
	}
	return ack.Sequence, nil
}

// adopt reads the key after a revision mismatch: if it holds our value,
// its revision is ours; otherwise the lease was taken.
func (l *Lease) adopt(ctx context.Context) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.Renew)
	defer cancel()
	e, err := l.kv.Get(ctx, l.cfg.Role)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			return 0, errLeaseTaken // expired: whoever comes first may take it
		}
		return 0, err
	}
	var v leaseValue
	if json.Unmarshal(e.Value(), &v) != nil || v.Holder != l.cfg.Holder {
		return 0, errLeaseTaken
	}
	return e.Revision(), nil
}

// revisionMismatch reports a compare-and-set failure: the key is not at
// the expected revision.
func revisionMismatch(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) &&
		(apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// Release gives the lease up: it stops renewing, deletes the key if it
// still holds this holder's revision (a stand-by then takes over at
// once) and cancels the held context with [ErrLeaseReleased]. Releasing
// a lease not held does nothing. The error is the deletion's: the lease
// then expires after its TTL anyway.
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	if !l.held {
		l.mu.Unlock()
		return nil
	}
	stop, done := l.stop, l.done
	l.mu.Unlock()
	close(stop)
	<-done
	l.bg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = false
	l.watchdog.Stop()
	l.cancel(ErrLeaseReleased)
	if l.lost {
		return nil
	}
	err := l.kv.Delete(ctx, l.cfg.Role, jetstream.LastRevision(l.rev))
	if err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return fmt.Errorf("release lease %s: %w", l.cfg.Role, err)
	}
	l.log.Info("lease released")
	return nil
}

// releaseKey gives the key up when the holder's context ended without
// Release.
func (l *Lease) releaseKey() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost {
		return
	}
	l.lost = true
	l.watchdog.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.TTL)
	defer cancel()
	_ = l.kv.Delete(ctx, l.cfg.Role, jetstream.LastRevision(l.rev))
	l.log.Info("lease released: context ended")
}

// LeaseHolder returns the holder named in the lease of role in bucket
// (the default bucket when empty), or "" when no one holds it.
func LeaseHolder(ctx context.Context, js jetstream.JetStream, bucket, role string) (string, error) {
	if bucket == "" {
		bucket = DefaultLeaseBucket
	}
	kv, err := js.KeyValue(ctx, bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("lease bucket %s: %w", bucket, err)
	}
	e, err := kv.Get(ctx, role)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("lease %s: %w", role, err)
	}
	var v leaseValue
	if err := json.Unmarshal(e.Value(), &v); err != nil {
		return "", fmt.Errorf("lease %s: decode value: %w", role, err)
	}
	return v.Holder, nil
}

// serverTTL rounds ttl up to whole seconds: the server truncates.
func serverTTL(ttl time.Duration) time.Duration {
	return time.Duration(math.Ceil(ttl.Seconds())) * time.Second
}

// validBucket reports whether s is a usable KV bucket name.
func validBucket(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return s != ""
}

// validKey reports whether s is a usable KV key.
func validKey(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-' || c == '_' || c == '=' || c == '/' || c == '.':
		default:
			return false
		}
	}
	return true
}

package export

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Health is what an [Exporter]'s commits came to, for health checks: an
// exporter whose commits fail (a full or read-only disk, a directory
// gone) keeps running and retrying, but exports nothing, and only its
// health can say so.
type Health struct {
	// LastCommit is when a commit round last succeeded (zero: none yet
	// in this process). A round with nothing due succeeds too, so that
	// an idle exporter stays healthy.
	LastCommit time.Time
	// LastError is the error of the last failed commit or write ("":
	// none since start), and LastErrorAt when it failed. They are kept
	// after a later success, for the record.
	LastError   string
	LastErrorAt time.Time
	// ConsecutiveFailures counts the failed commits and writes since the
	// last commit that made progress; 0 is healthy. While it is not 0, a
	// round with nothing due does not count as a success: the part that
	// failed is still open and waits for its retry.
	ConsecutiveFailures int
}

// Err returns nil when the last commit succeeded, and otherwise an error
// saying how many failed in a row and the last error.
func (h Health) Err() error {
	if h.ConsecutiveFailures == 0 {
		return nil
	}
	return fmt.Errorf("export: %d commits failed in a row, the last at %s: %s",
		h.ConsecutiveFailures, h.LastErrorAt.UTC().Format(time.RFC3339), h.LastError)
}

// Health returns the state of the exporter's commits. It never waits for
// a commit in progress, and is safe for concurrent use with Run.
func (x *Exporter) Health() Health {
	x.health.mu.Lock()
	defer x.health.mu.Unlock()
	return x.health.h
}

// commitHealth is the state behind [Exporter.Health].
type commitHealth struct {
	mu sync.Mutex
	h  Health
	// progress is what was committed at the last record: files, archive
	// segments and the saved position.
	progress [3]uint64
}

// noteCommitLocked records the outcome of a commit round or a write of
// the active run; x.mu held. An error after ctx ended is a stop, not a
// failure.
func (x *Exporter) noteCommitLocked(ctx context.Context, err error) {
	if err != nil && ctx.Err() != nil {
		return
	}
	x.countLocked()
	progress := [3]uint64{uint64(x.files.Load()), uint64(x.segments.Load()), x.saved}
	now := time.Now()
	h := &x.health
	h.mu.Lock()
	defer h.mu.Unlock()
	moved := progress != h.progress
	h.progress = progress
	switch {
	case err != nil:
		h.h.ConsecutiveFailures++
		h.h.LastError, h.h.LastErrorAt = err.Error(), now
	case h.h.ConsecutiveFailures == 0 || moved:
		h.h.ConsecutiveFailures = 0
		h.h.LastCommit = now
	}
}

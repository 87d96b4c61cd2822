package store

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// Error is a failure of the state's files or disk: one pebble
// reports as fatal (a write-ahead log or manifest it could not write: a
// full disk, an I/O error), or corruption it found (a table that does not
// check out, or is missing). From the first one on, the [Store] refuses
// every operation with it: what pebble holds in memory may no longer be
// what is on disk. Corruption wraps [ErrCorrupt]: the indexer then
// moves the state aside and rebuilds it from the stream. Any other must
// be fixed on the machine (free space) before the indexer is started
// again; it resumes from the last state committed.
type Error struct {
	Dir string // pebble's directory
	Err error
}

// Error formats the error as "index: state DIR: cause".
func (e *Error) Error() string { return "index: state " + e.Dir + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// fault holds the first fatal failure of a store. pebble reports
// fatal errors through its Logger's Fatalf and expects it not to return;
// here it returns, and the store stops being used instead.
type fault struct {
	dir string
	log *slog.Logger

	mu  sync.Mutex
	err error
}

// get returns the failure, nil if none.
func (f *fault) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// set records err (as an *Error) unless a failure is recorded
// already, logs it, and returns the failure recorded.
func (f *fault) set(err error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		if pebble.IsCorruptionError(err) && !errors.Is(err, ErrCorrupt) {
			err = fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
		f.err = &Error{Dir: f.dir, Err: err}
		f.log.Error("indexer state failed; it is not used any more", KeyState, f.dir, KeyError, err)
	}
	return f.err
}

// check turns an error of a pebble operation into the store's failure
// when it is corruption (the store is then done with), and returns the
// failure recorded, if any, before err.
func (f *fault) check(err error) error {
	if err != nil && pebble.IsCorruptionError(err) {
		return f.set(err)
	}
	if ferr := f.get(); ferr != nil {
		return ferr
	}
	return err
}

// corrupt reports whether the failure recorded is corruption.
func (f *fault) corrupt() bool {
	return errors.Is(f.get(), ErrCorrupt)
}

// fatalError is what pebble passed to Fatalf: its message, wrapping the
// first error among the arguments (a *fs.PathError with ENOSPC, say).
type fatalError struct {
	msg string
	err error
}

func (e *fatalError) Error() string { return e.msg }
func (e *fatalError) Unwrap() error { return e.err }

// pebbleLogger sends pebble's messages to slog (its chatter at Debug) and
// records a fatal one as the store's failure instead of exiting.
type pebbleLogger struct {
	log   *slog.Logger
	fault *fault
}

func (l pebbleLogger) Infof(format string, args ...any) { l.log.Debug(fmt.Sprintf(format, args...)) }
func (l pebbleLogger) Errorf(format string, args ...any) {
	l.log.Error(fmt.Sprintf(format, args...), KeyComponent, "index.store")
}

// Fatalf records the failure: pebble calls it when it must not go on (a
// commit it could not write to its log, a manifest it could not sync).
// The store refuses every operation from then on.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	e := &fatalError{msg: fmt.Sprintf(format, args...)}
	for _, a := range args {
		if err, ok := a.(error); ok {
			e.err = err
			break
		}
	}
	l.fault.set(e)
}

// dataCorruption is pebble's DataCorruption event: a table that does not
// check out or is missing, found by a read or in the background.
func (l pebbleLogger) dataCorruption(info pebble.DataCorruptionInfo) {
	cause := info.Details
	if cause == nil {
		cause = errors.New("corrupt")
	}
	l.fault.set(fmt.Errorf("%w: %s: %w", ErrCorrupt, info.Path, cause))
}

package bus

import (
	"errors"
	"fmt"
)

// Sentinel errors of the bus package. Match them with [errors.Is].
var (
	// ErrInvalidConfig reports a configuration field with an invalid value.
	// It is always wrapped in a *[ConfigError] naming the field; the caller
	// must fix the configuration, retrying cannot help.
	ErrInvalidConfig = errors.New("bus: invalid configuration")

	// ErrClosed is returned by [Publisher.Publish] after [Publisher.Close]
	// began: the message was not taken and its done callback is never
	// called.
	ErrClosed = errors.New("bus: publisher closed")

	// ErrAbandoned is passed to the done callback of every message that was
	// not yet acknowledged when [Publisher.Close]'s context ended. The
	// message may or may not be stored: the caller must not advance its
	// checkpoint past it; a later re-send is dropped by the duplicate
	// window if the first copy was stored.
	ErrAbandoned = errors.New("bus: publisher closed before the message was acknowledged")

	// ErrRejected is wrapped into the done error of a message that the
	// server refused for what it is (too large for the stream or the
	// server, a malformed subject or header), so that re-sending the same
	// bytes cannot succeed. The caller should dead-letter the source line
	// and go on; later messages are not held back by it.
	ErrRejected = errors.New("bus: message rejected")

	// ErrInvalidMessage is returned by [Publisher.Publish] for a message it
	// cannot publish safely: no subject, no Nats-Msg-Id header, or a reply
	// subject set. It is a bug in the caller.
	ErrInvalidMessage = errors.New("bus: invalid message")

	// ErrReconnectBuffer is returned by [NewPublisher] when the connection
	// buffers publishes while it reconnects (nats.ReconnectBufSize is not
	// -1). Such a buffer sends messages written during an outage after the
	// reconnect, ahead of earlier ones that the outage lost, which breaks
	// per-file order. Connect with [Connect], [Embedded.Conn] or
	// nats.ReconnectBufSize(-1).
	ErrReconnectBuffer = errors.New("bus: connection buffers publishes while reconnecting")

	// ErrSchemaVersion is returned by [DecodeEntry] for a message without
	// the Sessionpipe-Schema header or with a version this build does not
	// read. The consumer should leave the message unacknowledged (or
	// dead-letter it) and be upgraded.
	ErrSchemaVersion = errors.New("bus: unsupported schema version")

	// ErrEntryTooLarge is returned by [FitEntryMsg] for an entry whose
	// message cannot be made small enough even with its text fields, tool
	// calls and results left out. The caller should dead-letter the
	// source line.
	ErrEntryTooLarge = errors.New("bus: entry too large for a message even when shortened")

	// ErrServerStart is returned by [StartEmbedded] when the embedded
	// server could not start (listener, store directory, JetStream).
	ErrServerStart = errors.New("bus: embedded server did not start")

	// ErrStopConsuming, wrapped into a [Handler]'s error, makes
	// [Consumer.Run] return that error at once, without acknowledging the
	// batch (the caller wants to stop: rebuild after a gap, shut down).
	// Any other handler error is retried.
	ErrStopConsuming = errors.New("bus: stop consuming")

	// ErrStartAhead is returned by [Consumer.Run] when the start position
	// lies beyond the stream's last message plus one: the caller's state
	// was built from another stream (deleted and recreated). The caller
	// must rebuild its state (see [CheckIdentity]); retrying cannot help.
	ErrStartAhead = errors.New("bus: start sequence beyond the end of the stream")

	// ErrGap is wrapped by *[Gap]: messages the consumer should have
	// delivered were removed from the stream first.
	ErrGap = errors.New("bus: messages aged out of the stream")

	// ErrStreamMismatch is wrapped by *[StreamMismatchError]: the caller's
	// state belongs to another incarnation of the stream and must be
	// rebuilt, not applied to.
	ErrStreamMismatch = errors.New("bus: state belongs to another stream")

	// ErrLeaseLost is the cause of a held lease's context when the lease
	// was lost: not renewed in time, or taken over. The holder must stop
	// the work the lease guards at once.
	ErrLeaseLost = errors.New("bus: lease lost")

	// ErrLeaseReleased is the cause of a held lease's context after
	// [Lease.Release].
	ErrLeaseReleased = errors.New("bus: lease released")
)

// ConfigError names the configuration field that failed validation.
type ConfigError struct {
	Field string // configuration field, as named in flags and docs
	Value any    // the rejected value
	Err   error  // ErrInvalidConfig, possibly wrapped with a reason
}

// Error formats the error as "bus: invalid configuration: field=value: reason".
func (e *ConfigError) Error() string {
	return fmt.Sprintf("%v: %s=%v", e.Err, e.Field, e.Value)
}

// Unwrap returns the underlying error, which wraps [ErrInvalidConfig].
func (e *ConfigError) Unwrap() error { return e.Err }

// invalid builds a *ConfigError for field with a reason.
func invalid(field string, value any, reason string) error {
	return &ConfigError{Field: field, Value: value, Err: fmt.Errorf("%w (%s)", ErrInvalidConfig, reason)}
}

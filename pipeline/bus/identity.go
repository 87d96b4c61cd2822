package bus

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// StreamIdentity identifies one incarnation of a stream: state derived
// from a stream (an indexer's aggregates with the last sequence applied,
// an exporter's manifest) records it, and compares it with the stream's
// current identity before applying more messages. Sequences are only
// meaningful within one incarnation: a stream deleted and recreated
// starts again at 1, and another cluster's stream of the same name has
// its own sequences.
//
// Created is what changes when the stream is deleted and recreated: the
// server sets it once, when the stream is created, keeps it across
// server restarts, updates and leader changes, and a new stream gets a
// new one. Cluster and Domain tell apart two JetStream installations
// whose streams might, in theory, have been created at the same instant.
// The JSON form is meant to be stored beside the state.
type StreamIdentity struct {
	Name    string    `json:"name"`              // stream name
	Created time.Time `json:"created"`           // creation time, set by the server
	Cluster string    `json:"cluster,omitempty"` // JetStream cluster name, "" for a single server
	Domain  string    `json:"domain,omitempty"`  // JetStream domain, "" when none
}

// Identity returns the identity of the stream named name (the default
// stream when name is empty). It fails with jetstream.ErrStreamNotFound
// (wrapped) when there is no such stream, and with context.Cause(ctx)
// when ctx ends first.
func Identity(ctx context.Context, js jetstream.JetStream, name string) (StreamIdentity, error) {
	if name == "" {
		name = DefaultStream
	}
	s, err := js.Stream(ctx, name)
	if err != nil {
		if ctx.Err() != nil {
			return StreamIdentity{}, context.Cause(ctx)
		}
		return StreamIdentity{}, fmt.Errorf("stream %s identity: %w", name, err)
	}
	return identityOf(s.CachedInfo()), nil
}

// identityOf extracts the identity from stream info.
func identityOf(info *jetstream.StreamInfo) StreamIdentity {
	id := StreamIdentity{Name: info.Config.Name, Created: info.Created.UTC(), Domain: info.Domain}
	if info.Cluster != nil {
		id.Cluster = info.Cluster.Name
	}
	return id
}

// Equal reports whether id and o name the same incarnation of a stream.
// Creation times are compared with [time.Time.Equal].
func (id StreamIdentity) Equal(o StreamIdentity) bool {
	return id.Name == o.Name && id.Created.Equal(o.Created) && id.Cluster == o.Cluster && id.Domain == o.Domain
}

// IsZero reports whether id is the zero identity (no state saved yet).
func (id StreamIdentity) IsZero() bool {
	return id.Name == "" && id.Created.IsZero() && id.Cluster == "" && id.Domain == ""
}

// String formats id as name@created[/cluster][/domain] for logs and
// errors.
func (id StreamIdentity) String() string {
	s := id.Name + "@" + id.Created.Format(time.RFC3339Nano)
	if id.Cluster != "" {
		s += " cluster " + id.Cluster
	}
	if id.Domain != "" {
		s += " domain " + id.Domain
	}
	return s
}

// CheckIdentity compares the identity saved with a caller's state with
// the stream's current one. It returns nil when they are equal or saved
// is zero (no state yet), and a *[StreamMismatchError] when the state
// belongs to another stream: the caller must rebuild its state from the
// stream instead of applying messages to it. Other errors are those of
// [Identity].
func CheckIdentity(ctx context.Context, js jetstream.JetStream, saved StreamIdentity) (StreamIdentity, error) {
	name := saved.Name
	cur, err := Identity(ctx, js, name)
	if err != nil {
		return StreamIdentity{}, err
	}
	if saved.IsZero() || saved.Equal(cur) {
		return cur, nil
	}
	return cur, &StreamMismatchError{Saved: saved, Current: cur}
}

// StreamMismatchError reports state that belongs to another incarnation
// of the stream (deleted and recreated, or another cluster's). It wraps
// [ErrStreamMismatch].
type StreamMismatchError struct {
	Saved   StreamIdentity // the identity recorded with the state
	Current StreamIdentity // the stream's identity now
}

// Error names both identities.
func (e *StreamMismatchError) Error() string {
	return fmt.Sprintf("%v: state of %v, stream is %v", ErrStreamMismatch, e.Saved, e.Current)
}

// Unwrap returns [ErrStreamMismatch].
func (e *StreamMismatchError) Unwrap() error { return ErrStreamMismatch }
